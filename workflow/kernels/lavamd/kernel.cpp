// LavaMD, host CPU (Kernel Tuner's C backend): `threads` OpenMP threads over home boxes;
// within a box, passes of ipt home particles, each neighbour particle loaded once per pass
// for all ipt of them. The arithmetic is lavamd.h's.
#include "lavamd.h"
#include <omp.h>

#ifndef threads
#define threads 1
#endif

extern "C" void lavamd(const T_pos *pos, const T_q *q, T_out *fv, int nb, int ppb) {
    const int nboxes = nb * nb * nb;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int b = 0; b < nboxes; b++) {
        for (int i0 = 0; i0 < ppb; i0 += ipt) {
            T_acc xi[ipt], yi[ipt], zi[ipt];      // home coordinates
            T_acc av[ipt], ax[ipt], ay[ipt], az[ipt];  // potential and force sums
            for (int k = 0; k < ipt; k++)  // padded lanes repeat particle i0
                lavamd_load_home(pos, (long)b * ppb + (i0 + k < ppb ? i0 + k : i0), k, xi, yi, zi, av, ax, ay, az);
            for (int nbr = 0; nbr < 27; nbr++) {
                const int box = lavamd_neighbour(b, nb, nbr);
                if (box < 0) continue;
                const T_pos *pc = pos + 3L * box * ppb;
                lavamd_accumulate(pc, pc + 1, pc + 2, 3, q + (long)box * ppb, ppb, xi, yi, zi, av, ax, ay, az);
            }
            for (int k = 0; k < ipt && i0 + k < ppb; k++) lavamd_store(fv, (long)b * ppb + i0 + k, k, av, ax, ay, az);
        }
    }
}
