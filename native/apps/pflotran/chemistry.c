/* The chemistry of the 100_100_100/calcite deck as the deck defines it (PFLOTRAN's
 * `.deprecated/example_problems/100_100_100/calcite/pflotran.in`, upstream master 980d8d56 of
 * the public mirror fmyuan/pflotran-elm-interface), with the data of its database
 * (`database/hanford.dat`, same commit: log K at 25 C, ion-size parameter a0 in Angstrom,
 * charge z; cited by species below):
 *
 *   primary species   Ca++, H+, HCO3-, Tracer           (unknowns: ln m, the log formulation)
 *   secondary species OH-, CO3--, CO2(aq), CaCO3(aq), CaHCO3+  (in equilibrium, mass action)
 *   gas               CO2(g)                             (passive: constraints only)
 *   mineral           Calcite, kinetic, k = 1e-8 mol/m^2/s (MINERAL_KINETICS RATE_CONSTANT)
 *
 * Mass action (hanford.dat writes each species as its dissociation into primaries, nu_si, with
 * log K of that reaction): gamma_s m_s = K_s^-1 prod_i (gamma_i m_i)^nu_si, water's activity 1.
 * The total of component j, the unknown's conserved amount, T_j = m_j + sum_s nu_sj m_s.
 * Activity coefficients: Debye-Hueckel with B-dot (the deck's ACTIVITY_COEFFICIENTS),
 *     log10 gamma = -A z^2 sqrt(I) / (1 + a0 B sqrt(I)) + Bdot I,   gamma = 1 for z = 0,
 * I = 1/2 sum z^2 m over primary and secondary species. A, B, Bdot at 25 C: 0.5114, 0.3288,
 * 0.0410 (hanford.dat's header gives only its temperature points; PFLOTRAN's database reader
 * sets these 25 C values, reaction_database.F90, Helgeson's 1969 B-dot table). The keyword
 * alone means PFLOTRAN's defaults LAG and TIMESTEP (reaction.F90): the coefficients are
 * computed once at the start of each time step from the molalities then (I from the primary
 * and the secondary molalities of the last solution, one pass) and held through the step's
 * Newton solve, so the Jacobian below is exact for the residual it solves.
 * Calcite (hanford.dat: Calcite = -H+ + Ca++ + HCO3-, log K 1.8487), transition-state rate
 *     R = k A (1 - Q/K),   Q = a_Ca++ a_HCO3- / a_H+     (mol per m^3 of rock per s),
 * R > 0 dissolves. A = 1 m^2/m^3, the deck's "Calcite 0.75 1." (volume fraction, specific
 * area); 0.75 of calcite does not run out in the deck's time, so A stays.
 * CO2(g) (hanford.dat: CO2(g) = -H2O + H+ + HCO3-, log K -7.8136) is a passive gas: the deck's
 * constraints fix HCO3- by equilibrium with pCO2 = 10^-3 bar; there is no gas phase, so it adds
 * no unknown and no term to the equations. */
#include <math.h>
#include <string.h>
#include "pflotran.h"

const char *const species_name[NS] = {"Ca++", "H+", "HCO3-", "Tracer"};
const char *const secondary_name[NSEC] = {"OH-", "CO3--", "CO2(aq)", "CaCO3(aq)", "CaHCO3+"};

/* hanford.dat, the primary species' lines: a0, z. */
static const double primary_a0[NS] = {6.0, 9.0, 4.0, 0.0}, primary_z[NS] = {2, 1, -1, 0};
/* hanford.dat, the secondary species' lines: stoichiometry over (Ca++, H+, HCO3-, Tracer)
 * (H2O dropped: activity 1), log K at 25 C, a0, z. */
static const double secondary_nu[NSEC][NS] = {
    {0, -1, 0, 0}, /* OH- = H2O - H+ */
    {0, -1, 1, 0}, /* CO3-- = -H+ + HCO3- */
    {0, 1, 1, 0},  /* CO2(aq) = -H2O + H+ + HCO3- */
    {1, -1, 1, 0}, /* CaCO3(aq) = -H+ + Ca++ + HCO3- */
    {1, 0, 1, 0},  /* CaHCO3+ = Ca++ + HCO3- */
};
static const double secondary_log_K[NSEC] = {13.9951, 10.3288, -6.3447, 7.0017, -1.0467};
static const double secondary_a0[NSEC] = {3.5, 4.5, 3.0, 3.0, 4.0};
static const double secondary_z[NSEC] = {-1, -2, 0, 0, 1};
static const double calcite_nu[NS] = {1, -1, 1, 0}, calcite_log_K = 1.8487;
static const double co2_gas_log_K = -7.8136; /* CO2(g) = -H2O + H+ + HCO3- */

chemistry chemistry_calcite(double rate_constant)
{
    chemistry c = {
        .rate_constant = rate_constant,
        .area = 1.0,       /* m^2 of calcite surface per m^3 of rock */
        .porosity = 0.25,  /* the deck's POROSITY */
        .diffusion = 1e-9, /* m^2/s, the deck's DIFFUSION_COEFFICIENT, TORTUOSITY 1 */
        /* kg/m^3: water at 25 C and 1 atm (IAPWS-95: 997.05), which PFLOTRAN takes from its
         * water EOS at the reference temperature 25 C without a flow mode (eos.F90) */
        .density = 997.05,
        .debye_a = 0.5114,
        .debye_b = 0.3288,
        .debye_bdot = 0.0410,
        .ln_K = calcite_log_K * M_LN10,
    };
    for (int s = 0; s < NSEC; s++)
        c.ln_K_secondary[s] = secondary_log_K[s] * M_LN10;
    return c;
}

/* ln gamma of a species of charge z and size a0 at ionic strength I (B-dot). */
static double ln_gamma(const chemistry *chem, double z, double a0, double sqrt_i)
{
    if (z == 0)
        return 0.0;
    double log10_gamma = -z * z * chem->debye_a * sqrt_i / (1.0 + a0 * chem->debye_b * sqrt_i) +
                         chem->debye_bdot * sqrt_i * sqrt_i;
    return log10_gamma * M_LN10;
}

/* Secondary molalities from ln m and ln gamma of the primaries (mass action). */
static void secondaries(const chemistry *chem, const double *ln_m, const double *lngam,
                        double *m_sec)
{
    double ln_a[NS];
    for (int i = 0; i < NS; i++)
        ln_a[i] = ln_m[i] + lngam[i];
    for (int s = 0; s < NSEC; s++) {
        double ln_ma = -chem->ln_K_secondary[s] - lngam[NS + s];
        for (int i = 0; i < NS; i++)
            ln_ma += secondary_nu[s][i] * ln_a[i];
        m_sec[s] = exp(ln_ma);
    }
}

void speciate(const chemistry *chem, const double *ln_m, const double *lngam, double *total,
              double *dtotal)
{
    double m_sec[NSEC];
    secondaries(chem, ln_m, lngam, m_sec);
    for (int j = 0; j < NS; j++) {
        double m = exp(ln_m[j]);
        total[j] = m;
        for (int k = 0; k < NS; k++)
            dtotal[j * NS + k] = j == k ? m : 0.0;
    }
    for (int s = 0; s < NSEC; s++)
        for (int j = 0; j < NS; j++) {
            double weighted = secondary_nu[s][j] * m_sec[s]; /* nu_sj m_s */
            total[j] += weighted;
            for (int k = 0; k < NS; k++) /* d m_s / d ln m_k = nu_sk m_s */
                dtotal[j * NS + k] += weighted * secondary_nu[s][k];
        }
}

void activity_update(const chemistry *chem, const double *ln_m, double *lngam)
{
    double m_sec[NSEC], twice_i = 0;
    secondaries(chem, ln_m, lngam, m_sec);
    for (int i = 0; i < NS; i++)
        twice_i += primary_z[i] * primary_z[i] * exp(ln_m[i]);
    for (int s = 0; s < NSEC; s++)
        twice_i += secondary_z[s] * secondary_z[s] * m_sec[s];
    double sqrt_i = sqrt(0.5 * twice_i);
    for (int i = 0; i < NS; i++)
        lngam[i] = ln_gamma(chem, primary_z[i], primary_a0[i], sqrt_i);
    for (int s = 0; s < NSEC; s++)
        lngam[NS + s] = ln_gamma(chem, secondary_z[s], secondary_a0[s], sqrt_i);
}

void activity_equilibrate(const chemistry *chem, const double *ln_m, double *lngam)
{
    memset(lngam, 0, NGAMMA * sizeof(double));
    for (int pass = 0; pass < ACTIVITY_PASSES; pass++) { /* until a pass changes no bit */
        double before[NGAMMA];
        memcpy(before, lngam, sizeof before);
        activity_update(chem, ln_m, lngam);
        if (!memcmp(before, lngam, sizeof before))
            break;
    }
}

double water_species(const chemistry *chem, const water *w, double *m)
{
    double twice_i = 0;
    secondaries(chem, w->ln_m, w->ln_gamma, m + NS);
    for (int i = 0; i < NS; i++) {
        m[i] = exp(w->ln_m[i]);
        twice_i += primary_z[i] * primary_z[i] * m[i];
    }
    for (int s = 0; s < NSEC; s++)
        twice_i += secondary_z[s] * secondary_z[s] * m[NS + s];
    return 0.5 * twice_i;
}

rate calcite_rate(const chemistry *chem, const double *ln_m, const double *lngam)
{
    double ln_q = 0;
    for (int i = 0; i < NS; i++)
        ln_q += calcite_nu[i] * (ln_m[i] + lngam[i]);
    double ka = chem->rate_constant * chem->area, q_over_k = exp(ln_q - chem->ln_K);
    rate r = {.r = ka * (1.0 - q_over_k)};
    for (int i = 0; i < NS; i++) /* dR / d ln m_i */
        r.d[i] = -ka * q_over_k * calcite_nu[i];
    return r;
}

const double *calcite_stoichiometry(void)
{
    return calcite_nu;
}

/* ---- the deck's waters (CONSTRAINT initial and pulse) --------------------------------- */

/* A water fixed by pH, pCO2 (HCO3- in equilibrium with CO2(g)) and either calcite's
 * saturation (Q/K = saturation) or the total of Ca++, and the Tracer's total: the activity
 * coefficients iterated with the molalities until they agree (as PFLOTRAN equilibrates a
 * constraint). */
static water constrained_water(const chemistry *chem, double ph, double log10_pco2,
                               double saturation, double ca_total, double tracer)
{
    water w = {{0}, {0}};
    double ln_a_h = -ph * M_LN10;
    double ln_a_hco3 = (co2_gas_log_K + log10_pco2) * M_LN10 - ln_a_h; /* a_H a_HCO3 = K pCO2 */
    for (int pass = 0; pass < ACTIVITY_PASSES; pass++) {
        w.ln_m[H] = ln_a_h - w.ln_gamma[H];
        w.ln_m[HCO3] = ln_a_hco3 - w.ln_gamma[HCO3];
        w.ln_m[TRACER] = log(tracer); /* no complexes */
        if (saturation > 0) { /* a_Ca a_HCO3 / a_H = saturation K */
            w.ln_m[CA] = log(saturation) + chem->ln_K + ln_a_h - ln_a_hco3 - w.ln_gamma[CA];
        } else { /* T_Ca = m_Ca (1 + sum over Ca's complexes of m_s / m_Ca) */
            double total[NS], dtotal[NS * NS];
            w.ln_m[CA] = 0.0;
            speciate(chem, w.ln_m, w.ln_gamma, total, dtotal);
            w.ln_m[CA] = log(ca_total / total[CA]);
        }
        activity_update(chem, w.ln_m, w.ln_gamma);
    }
    return w;
}

/* CONSTRAINT initial: Ca++ by equilibrium with Calcite, pH 8, HCO3- by CO2(g) at log pCO2 -3,
 * Tracer 1e-8 (total, molal: the deck's MOLAL). */
water water_background(const chemistry *chem)
{
    return constrained_water(chem, 8.0, -3.0, 1.0, 0.0, 1e-8);
}

/* CONSTRAINT pulse: Ca++ 1e-8 total, pH 5, HCO3- by CO2(g) at log pCO2 -3, Tracer 1. */
water water_acidic_pulse(const chemistry *chem)
{
    return constrained_water(chem, 5.0, -3.0, 0.0, 1e-8, 1.0);
}

/* The batch case's water: the background's pH and pCO2, Ca++ at half calcite's saturation
 * (Q/K = 1/2), so that calcite dissolves. */
water water_batch(const chemistry *chem)
{
    return constrained_water(chem, 8.0, -3.0, 0.5, 0.0, 1e-8);
}

/* ---- the batch reaction's ODE ---------------------------------------------------------- */

/* Solve the n x n system a y = b in place (Gaussian elimination, partial pivoting). */
static void solve_small(int n, double *a, double *b)
{
    for (int col = 0; col < n; col++) {
        int pivot = col;
        for (int row = col + 1; row < n; row++)
            if (fabs(a[row * n + col]) > fabs(a[pivot * n + col]))
                pivot = row;
        for (int q = 0; q < n; q++) {
            double swap = a[col * n + q];
            a[col * n + q] = a[pivot * n + q], a[pivot * n + q] = swap;
        }
        double swap = b[col];
        b[col] = b[pivot], b[pivot] = swap;
        for (int row = col + 1; row < n; row++) {
            double factor = a[row * n + col] / a[col * n + col];
            for (int q = col; q < n; q++)
                a[row * n + q] -= factor * a[col * n + q];
            b[row] -= factor * b[col];
        }
    }
    for (int row = n - 1; row >= 0; row--) {
        for (int q = row + 1; q < n; q++)
            b[row] -= a[row * n + q] * b[q];
        b[row] /= a[row * n + row];
    }
}

/* Totals at ln m with the activity coefficients in equilibrium with ln m. */
static void equilibrium_totals(const chemistry *chem, const double *ln_m, double *total)
{
    double lngam[NGAMMA], dtotal[NS * NS];
    activity_equilibrate(chem, ln_m, lngam);
    speciate(chem, ln_m, lngam, total, dtotal);
}

/* d ln m / dt of the closed batch (dT/dt = nu R / (phi rho)), the activity coefficients in
 * equilibrium with the water at every instant: dT/d ln m by central differences. Returns the
 * rate of the extent, mol per kg of water per s. */
static double batch_slope(const chemistry *chem, const double *ln_m, double *slope)
{
    double lngam[NGAMMA], jac[NS * NS];
    activity_equilibrate(chem, ln_m, lngam);
    double extent_rate = calcite_rate(chem, ln_m, lngam).r / (chem->porosity * chem->density);
    for (int k = 0; k < NS; k++) {
        double up[NS], down[NS], t_up[NS], t_down[NS], h = 1e-6;
        memcpy(up, ln_m, sizeof up), memcpy(down, ln_m, sizeof down);
        up[k] += h, down[k] -= h;
        equilibrium_totals(chem, up, t_up);
        equilibrium_totals(chem, down, t_down);
        for (int j = 0; j < NS; j++)
            jac[j * NS + k] = (t_up[j] - t_down[j]) / (2 * h);
    }
    for (int j = 0; j < NS; j++)
        slope[j] = calcite_nu[j] * extent_rate;
    solve_small(NS, jac, slope);
    return extent_rate;
}

void batch_extent(const chemistry *chem, water start, const double *t, int n, double *extent)
{
    double u[NS], x = 0.0, now = 0.0;
    memcpy(u, start.ln_m, sizeof u);
    for (int m = 0; m < n; m++) {
        while (now < t[m]) {
            double k[4][NS + 1], v[NS];
            /* RK4 at steps of 1/200 of the output interval: far below the reaction's scale */
            double step = fmin(t[m] - now, (t[0] > 0 ? t[0] : t[m]) / 200.0);
            for (int stage = 0; stage < 4; stage++) {
                double at = stage == 0 ? 0.0 : stage == 3 ? step : 0.5 * step;
                for (int j = 0; j < NS; j++)
                    v[j] = u[j] + (stage ? at * k[stage - 1][j] : 0.0);
                k[stage][NS] = batch_slope(chem, v, k[stage]);
            }
            for (int j = 0; j <= NS; j++) {
                double d = step / 6.0 * (k[0][j] + 2 * k[1][j] + 2 * k[2][j] + k[3][j]);
                if (j < NS)
                    u[j] += d;
                else
                    x += d;
            }
            now = (t[m] - now <= step) ? t[m] : now + step;
        }
        extent[m] = x;
    }
}
