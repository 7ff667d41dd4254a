#include "on_stream_bw.cuh"
int main(int argc, char **argv) { return on_stream_bw_main(argc, argv, 1); }
