/*
 * sysfilter_gen.c: sysfilter-gen, which builds the command's seccomp
 * programs when cordon is built.
 *
 * For each variant, in SYSFILTER_PROG's order, it builds the filter
 * with libseccomp (sysfilter_build) into a memfd, reads the program back
 * and prints it as C: one array of bytes each, and the table
 * sysfilter_progs (sysfilter_prog.c writes from it).  The API level is
 * the highest this libseccomp knows, not the building kernel's, so that
 * the programs do not depend on where cordon is built; a kernel that
 * lacks an action refuses the program when the command loads it, and
 * nothing runs.  Exits 1, having said why, on any failure.
 *
 * Runs in: make, on the building machine.
 */
#include <sys/types.h>

#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confine/sysfilter.h"

/* Prints the program in fd as the array sysfilter_prog_N. */
static int
gen_print(int fd, size_t n)
{
	unsigned char	 buf[65536];
	ssize_t		 len, i;

	if (lseek(fd, 0, SEEK_SET) == -1 ||
	    (len = read(fd, buf, sizeof(buf))) <= 0 ||
	    len == (ssize_t)sizeof(buf))
		return -1;
	printf("static const unsigned char sysfilter_prog_%zu[] = {", n);
	for (i = 0; i < len; i++)
		printf("%s0x%02x,", i % 12 == 0 ? "\n\t" : " ", buf[i]);
	printf("\n};\n\n");
	return 0;
}

int
main(void)
{
	char	*cause = NULL;
	size_t	 n;
	int	 fd;

	if (seccomp_api_set(7) != 0 && seccomp_api_set(6) != 0) {
		fprintf(stderr, "sysfilter-gen: libseccomp knows no API level "
		    "6 or 7: it is too old for cordon (2.5 or later)\n");
		return 1;
	}
	printf("/* Made by sysfilter-gen (confine/sysfilter_gen.c) from "
	    "confine/sysfilter.c. */\n#include \"confine/sysfilter.h\"\n\n");
	for (n = 0; n < SYSFILTER_NPROGS; n++) {
		if ((fd = sysfilter_memfd(&cause)) == -1 ||
		    sysfilter_build(fd, (enum sysfilter_unix)(n / 4),
		    (n & 2) != 0, (n & 1) != 0, &cause) == -1 ||
		    gen_print(fd, n) == -1) {
			fprintf(stderr, "sysfilter-gen: program %zu: %s\n", n,
			    cause != NULL ? cause : strerror(errno));
			free(cause);
			return 1;
		}
		close(fd);
	}
	printf("const struct sysfilter_prog sysfilter_progs[] = {\n");
	for (n = 0; n < SYSFILTER_NPROGS; n++)
		printf("\t{ sysfilter_prog_%zu, "
		    "sizeof(sysfilter_prog_%zu) },\n", n, n);
	printf("};\n");
	return fflush(stdout) == 0 ? 0 : 1;
}
