/*
 * fdpass.h: a descriptor sent beside a few bytes over a Unix socket
 * (SCM_RIGHTS), as PID 1, the command and cordon run hand listeners and
 * connections to each other.
 */
#ifndef CORDON_FDPASS_H
#define CORDON_FDPASS_H

#include <sys/types.h>

ssize_t	fdpass_send(int, int, const void *, size_t, int);
ssize_t	fdpass_recv(int, int *, void *, size_t, int);

#endif
