/*
 * mount_sys.h: the sandbox's /dev and /proc (mount_sys.c), made by PID 1
 * after the plan's mounts.
 */
#ifndef CORDON_MOUNT_SYS_H
#define CORDON_MOUNT_SYS_H

struct sandbox;

#define MOUNT_SYS_NODES	6	/* null, zero, full, random, urandom, tty */

void	mount_sys_nodes(const struct sandbox *, int *);
void	mount_sys_dev(const struct sandbox *, const int *);
void	mount_sys_proc(const struct sandbox *);

#endif
