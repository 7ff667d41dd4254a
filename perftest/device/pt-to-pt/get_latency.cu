#include "rma_latency.cuh"
int main(int argc, char **argv) { return rma_latency_main(argc, argv, 0); }
