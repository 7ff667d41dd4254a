#include "pg_bw.cuh"
int main(int argc, char **argv) { return pg_bw_main(argc, argv, 0); }
