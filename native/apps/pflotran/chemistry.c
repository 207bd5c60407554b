/* The reaction network of the 100_100_100/calcite problem, reduced to its kinetic core:
 *
 *     Calcite + H+  <->  Ca++ + HCO3-        log10 K = 1.8487 (mol/L, 25 C)
 *
 * with the transition-state-theory rate (PFLOTRAN's mineral kinetics)
 *
 *     R = k A (1 - Q/K),   Q = [Ca++][HCO3-] / [H+]
 *
 * in mol per m^3 of rock per second: R > 0 dissolves calcite (Ca++ and HCO3- appear, H+ is
 * consumed), R < 0 precipitates it. The Tracer does not react. Activity coefficients are 1
 * and aqueous complexes (CO2(aq), CO3--, CaHCO3+, ...) are left out: what is kept is what
 * shapes the solver's work, a stiff rate coupling three species in every cell. */
#include <math.h>
#include "pflotran.h"

const char *const species_name[NS] = {"Ca++", "H+", "HCO3-", "Tracer"};

chemistry chemistry_calcite(double rate_constant)
{
    chemistry c = {
        .rate_constant = rate_constant,
        .area = 1.0,           /* m^2 of calcite surface per m^3 of rock */
        .log10_K = 1.8487,
        .porosity = 0.25,
        .diffusion = 1e-9,     /* m^2/s */
    };
    c.K = pow(10.0, c.log10_K) * 1000.0; /* mol/L -> mol/m^3 */
    return c;
}

water water_background(const chemistry *chem)
{
    water w = {{0}};
    w.c[H] = 1e-5;      /* pH 8: 1e-8 mol/L */
    w.c[HCO3] = 1.0;    /* 1 mmol/L */
    w.c[CA] = chem->K * w.c[H] / w.c[HCO3]; /* at equilibrium with calcite: Q = K */
    w.c[TRACER] = 0.0;
    return w;
}

water water_acidic_pulse(const chemistry *chem)
{
    water w = water_background(chem);
    w.c[H] = 0.1;       /* pH 4 */
    w.c[TRACER] = 1.0;
    return w;
}

water water_batch(const chemistry *chem)
{
    water w = water_background(chem);
    w.c[H] *= 2.0;      /* pH 7.7: Q/K = 1/2, calcite dissolves until [H+] is halved back */
    return w;
}

rate calcite_rate(const chemistry *chem, double ca, double h, double hco3)
{
    double ka = chem->rate_constant * chem->area, q_over_k = ca * hco3 / (chem->K * h);
    return (rate){
        .r = ka * (1.0 - q_over_k),
        .d_ca = -ka * hco3 / (chem->K * h),
        .d_lnh = ka * q_over_k,
        .d_hco3 = -ka * ca / (chem->K * h),
    };
}

/* d(extent)/dt of the batch reaction, mol/m^3 of water per s, and its derivative. */
static double extent_rate(const chemistry *chem, water w, double x, double *slope)
{
    double ca = w.c[CA] + x, h = w.c[H] - x, hco3 = w.c[HCO3] + x;
    rate r = calcite_rate(chem, ca, h, hco3);
    if (slope) /* d/dx of R/porosity: dR/dCa + dR/dHCO3 - dR/d[H+] */
        *slope = (r.d_ca + r.d_hco3 - r.d_lnh / h) / chem->porosity;
    return r.r / chem->porosity;
}

void batch_extent(const chemistry *chem, water start, const double *t, int n, double *extent)
{
    double x = 0.0, now = 0.0;
    for (int m = 0; m < n; m++) {
        while (now < t[m]) {
            double slope, speed = fabs(extent_rate(chem, start, x, &slope));
            /* RK4 is accurate to round-off well inside |slope| h < 0.05, and while [H+]
             * changes by a few per cent per step */
            double step = fmin(t[m] - now, 0.05 / fmax(fabs(slope), 1e-300));
            step = fmin(step, 0.02 * (start.c[H] - x) / fmax(speed, 1e-300));
            double k1 = extent_rate(chem, start, x, NULL);
            double k2 = extent_rate(chem, start, x + 0.5 * step * k1, NULL);
            double k3 = extent_rate(chem, start, x + 0.5 * step * k2, NULL);
            double k4 = extent_rate(chem, start, x + step * k3, NULL);
            x += step / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
            now = (t[m] - now <= step) ? t[m] : now + step;
        }
        extent[m] = x;
    }
}
