/* The API reference of docs/api-reference.md: every public shmem_ and shmemx_ routine with its C
 * signature, where it runs, what it does and the header line that makes it (api_ref.c). */
#ifndef GSHMEM_TOOLS_API_REF_H
#define GSHMEM_TOOLS_API_REF_H

#include <stdio.h>

/* Prints the reference as markdown to out, reading the public headers under include_dir (the
 * folder holding gshmem.h) for the lines that make each routine. 0, or -1 after saying on stderr
 * what is missing (a header, a row, a meaning). */
int gshmemi_api_ref_print(FILE *out, const char *include_dir);

#endif
