/* gshmem-info: version and every environment variable with its default, value, accepted values and
 * doc. Exits 1 when a variable holds a bad value (each is named on stderr, then a summary).
 * gshmem-info --markdown prints the variables as the markdown table of docs/environment.md. */
#include <stdio.h>
#include <string.h>

#include "gshmem/types.h"
#include "runtime/env.h"

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--markdown") == 0) { /* the table of docs/environment.md */
        gshmemi_env_print_markdown(stdout);
        return 0;
    }
    int rc = gshmemi_env_init();

    printf("gshmem %d.%d.%d (OpenSHMEM %d.%d)\n", GSHMEM_VERSION_MAJOR, GSHMEM_VERSION_MINOR, GSHMEM_VERSION_PATCH,
           SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
    if (argc > 1 && strcmp(argv[1], "--version") == 0) return 0;
    printf("\nEnvironment variables:\n");
    gshmemi_env_print(stdout, &gshmemi_env);
    return rc == 0 ? 0 : 1;
}
