/* bcast on a stream (see perftest/common/coll_perf.cuh). */
#include "../../common/coll_perf.cuh"

int main(int argc, char **argv) { return pt_coll_main<PT_BCAST, 0>(argc, argv); }
