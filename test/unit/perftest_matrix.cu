/* Every (collective, type, op) that a -Dperftest_device_types=all build of the device collective
 * perftests compiles, in one file: test_perftest_matrix.sh passes it through nvcc's front end only
 * (-fdevice-syntax-only), so the default build and CI, which have float sum only, still notice
 * when that build stops compiling, without paying the 20 CPU-minutes of ptxas it takes. */
#define PT_DEVICE_MATRIX 1
#include "perftest/common/coll_perf.cuh"

#define PT_RUN(KIND, T) (void *)pt_coll_run<KIND, 1, T>,
#define PT_TYPE_RUNS(name, T) \
    PT_RUN(PT_BCAST, T) PT_RUN(PT_FCOLLECT, T) PT_RUN(PT_ALLTOALL, T) PT_RUN(PT_REDUCE, T) PT_RUN(PT_REDUCESCATTER, T)
#define PT_MAIN(KIND) (void *)pt_coll_main<KIND, 1>,
void *const pt_matrix[] = {PT_COLL_TYPES(PT_TYPE_RUNS) PT_RUN(PT_BARRIER, float) PT_RUN(PT_SYNC, float)
                           PT_MAIN(PT_BARRIER) PT_MAIN(PT_SYNC) PT_MAIN(PT_BCAST) PT_MAIN(PT_FCOLLECT)
                           PT_MAIN(PT_ALLTOALL) PT_MAIN(PT_REDUCE) PT_MAIN(PT_REDUCESCATTER)};

int main(void) { return pt_matrix[0] == NULL; }
