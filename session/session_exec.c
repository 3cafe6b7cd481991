/*
 * session_exec.c: cordon-session-exec, `cordon run --session` alone.  It
 * links the C library and the session's client (sessclient.c) only, so
 * it starts in a fraction of cordon's time: a command in a session costs
 * about what the command costs.  Its arguments are run --session's:
 * --session ID [--report FILE] -- CMD [ARGS...].
 */
#include "session/sess.h"

int
main(int argc, char **argv)
{
	return sessclient_main(argc, argv, "cordon-session-exec");
}
