#include "rma_bw.cuh"
int main(int argc, char **argv) { return rma_bw_main(argc, argv, 1); }
