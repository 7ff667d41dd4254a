/* One element type of a device collective perftest: perftest/meson.build compiles this file once
 * per (collective, type) with PT_KIND (PT_REDUCE, ...), PT_TYPE (float, ..., bfloat16) and
 * PT_CTYPE (its C type) defined, and links it into that collective's executable. */
#include "../../common/coll_perf.cuh"

#define PT_STR_(x) #x
#define PT_STR(x) PT_STR_(x)
#define PT_ENTRY_(name) pt_dev_run_##name
#define PT_ENTRY(name) PT_ENTRY_(name)

int PT_ENTRY(PT_TYPE)(pt_opts_t *o, int grid) { return pt_coll_run<PT_KIND, 1, PT_CTYPE>(o, grid, PT_STR(PT_TYPE)); }
