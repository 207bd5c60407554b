/* esm_geo.h: an analytic Earth for the ocean workloads: continents shaped (roughly) like the
 * real ones and an ocean depth with shelves, abyssal plains and a mid-Atlantic ridge. Smooth,
 * cheap, the same on every rank and machine, and free of data files. No MPI.
 *
 * Each continent is a super-ellipse in longitude-latitude; "coastness" c(lon, lat) is the
 * smallest super-ellipse measure over the continents (c < 1 on land, c = 1 on a coast);
 * Antarctica is everything south of 70S and the Arctic rim everything north of 80N. */
#ifndef ESM_GEO_H
#define ESM_GEO_H
#include <stdbool.h>

bool esm_geo_land(double lon, double lat);            /* degrees */
double esm_geo_depth(double lon, double lat);         /* metres; 0 on land */
#endif
