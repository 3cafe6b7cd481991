/*
 * mount_fd.h: the new mount API's moves by descriptor (mount_fd.c), for
 * the files of PID 1's filesystem view.
 */
#ifndef CORDON_MOUNT_FD_H
#define CORDON_MOUNT_FD_H

#include <sys/types.h>

#include <stdbool.h>
#include <stdint.h>

int	mount_fd_open(const char *, bool);
int	mount_fd_tmpfs(mode_t, unsigned int);
int	mount_fd_attrs(int, const char *, unsigned int, uint64_t, uint64_t);
int	mount_fd_move(int, int);

#endif
