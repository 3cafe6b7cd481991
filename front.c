/*
 * front.c: cordon as a user runs it, a small program that serves run
 * --session and --version itself, execs cordon-log for log,
 * cordon-offline for a run without the proxy (--network none or host)
 * and cordon-main for the rest.
 * It links the C library and the session's client alone (static, with
 * musl), for the commands an agent runs hundreds of times; cordon-main,
 * the whole program (cordon.c), links fourteen libraries, OpenSSL's
 * among them, and the dynamic loader's work over them costs more than a
 * command in a session does.  cordon-log (logs/log_main.c) links only
 * what reading a log needs, and alone serves it: cordon-main links
 * neither the logs' reader nor zlib.  cordon-offline (offline/) is
 * cordon-main's run without the proxy and OpenSSL, which a fresh run
 * without the network would load for nothing.
 * The command line is cordon-main's, unchanged: argv goes to either as
 * it came, argv[0] too.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/util.h"
#include "session/sess.h"

/* Where cordon-main and its kin are, from this program's folder. */
static const char *const front_dirs[] = {
	"",				/* built: beside it */
	"../libexec/cordon/",		/* installed */
};

/*
 * Execs the program name with argv, found beside this program's file
 * (its link resolved: a symbolic link to cordon finds the real one's
 * neighbour), or in ../libexec/cordon.  Returns only on failure: errno,
 * or -1 when /proc/self/exe cannot be read (said); self is the folder.
 */
static int
front_exec(const char *name, char **argv, char *self, size_t len)
{
	char	 path[PATH_MAX + 64], *slash;
	ssize_t	 n;
	size_t	 i;
	int	 err = ENOENT;

	if ((n = readlink("/proc/self/exe", self, len - 1)) == -1) {
		fprintf(stderr, "cordon: /proc/self/exe: %s\n",
		    strerror(errno));
		fprintf(stderr, "hint: cordon finds cordon-main by it; mount "
		    "/proc\n");
		return -1;
	}
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		slash[1] = '\0';
	for (i = 0; i < nitems(front_dirs); i++) {
		snprintf(path, sizeof(path), "%s%s%s", self, front_dirs[i],
		    name);
		execv(path, argv);
		if (errno != ENOENT)
			err = errno;
	}
	return err;
}

/*
 * Execs name (cordon-main, cordon-log or cordon-offline) with argv.
 * Returns only on failure, with the exit status cordon keeps for its
 * own failures.
 */
static int
front_exec_or_say(const char *name, char **argv)
{
	char	 self[PATH_MAX];
	int	 err;

	if ((err = front_exec(name, argv, self, sizeof(self))) == -1)
		return 125;
	fprintf(stderr, "cordon: cannot run %s (%s%s, %s../libexec/cordon/"
	    "%s): %s\n", name, self, name, self, name, strerror(err));
	fprintf(stderr, "hint: install %s with cordon: make install puts it "
	    "in PREFIX/libexec/cordon\n", name);
	return 125;
}

/*
 * Whether run's options (argv from "run") give the network mode none or
 * host, the last --network before the command winning: a run without
 * the proxy, which cordon-offline serves.  A guess from the words
 * alone: cordon-offline reads the options and the policy as
 * cordon-main does, and hands it what has the proxy after all.
 */
static bool
front_offline(int argc, char **argv)
{
	const char	*mode = NULL;
	int		 i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--network") == 0 && i + 1 < argc)
			mode = argv[++i];
		else if (strncmp(argv[i], "--network=", 10) == 0)
			mode = argv[i] + 10;
	return mode != NULL && (strcmp(mode, "none") == 0 ||
	    strcmp(mode, "host") == 0);
}

int
main(int argc, char **argv)
{
	char	 self[PATH_MAX];
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
	if (i < argc && strcmp(argv[i], "log") == 0)
		return front_exec_or_say("cordon-log", argv);
	/* cordon-main serves those runs too, where cordon-offline is not. */
	if (i < argc && strcmp(argv[i], "run") == 0 &&
	    front_offline(argc - i, argv + i) &&
	    front_exec("cordon-offline", argv, self, sizeof(self)) == -1)
		return 125;
	return front_exec_or_say("cordon-main", argv);
}
