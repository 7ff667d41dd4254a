/* sync from a kernel, thread/warp/block/grid scope (see perftest/common/coll_perf.cuh). */
#include "../../common/coll_perf.cuh"

int main(int argc, char **argv) { return pt_coll_main<PT_SYNC, 1>(argc, argv); }
