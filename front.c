/*
 * front.c: cordon as a user runs it, a small program that serves run
 * --session and --version itself and execs cordon-main for the rest.
 * It links the C library and the session's client alone (static, with
 * musl), for the commands an agent runs hundreds of times; cordon-main,
 * the whole program (cordon.c), links fourteen libraries, OpenSSL's
 * among them, and the dynamic loader's work over them costs more than a
 * command in a session does.  The command line is cordon-main's,
 * unchanged: argv goes to it as it came, argv[0] too.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sess.h"
#include "util.h"

/* Where cordon-main is, from the folder of this program's file. */
static const char *const front_main_paths[] = {
	"cordon-main",				/* built: beside it */
	"../libexec/cordon/cordon-main",	/* installed */
};

/*
 * Execs cordon-main with argv, found beside this program's file (its
 * link resolved: a symbolic link to cordon finds the real one's
 * neighbour), or in ../libexec/cordon.  Returns only on failure, with
 * the exit status cordon keeps for its own failures.
 */
static int
front_exec_main(char **argv)
{
	char	 self[PATH_MAX], path[PATH_MAX + 64], *slash;
	ssize_t	 n;
	size_t	 i;
	int	 err = ENOENT;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) == -1) {
		fprintf(stderr, "cordon: /proc/self/exe: %s\n",
		    strerror(errno));
		fprintf(stderr, "hint: cordon finds cordon-main by it; mount "
		    "/proc\n");
		return 125;
	}
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		slash[1] = '\0';
	for (i = 0; i < nitems(front_main_paths); i++) {
		snprintf(path, sizeof(path), "%s%s", self, front_main_paths[i]);
		execv(path, argv);
		if (errno != ENOENT)
			err = errno;
	}
	fprintf(stderr, "cordon: cannot run cordon-main (%scordon-main, "
	    "%s../libexec/cordon/cordon-main): %s\n", self, self,
	    strerror(err));
	fprintf(stderr, "hint: install cordon-main with cordon: make "
	    "install puts it in PREFIX/libexec/cordon\n");
	return 125;
}

int
main(int argc, char **argv)
{
	int	 i;

	/* The global flags, as cordon-main reads them. */
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "-vv") == 0)
			continue;
		if (strcmp(argv[i], "--version") == 0) {
			printf("cordon %s\n", CORDON_VERSION);
			return 0;
		}
		break;
	}
	if (i < argc && strcmp(argv[i], "run") == 0 &&
	    sessclient_named(argc - i, argv + i))
		return sessclient_main(argc - i, argv + i, "run");
	return front_exec_main(argv);
}
