/*
 * dir.h: a folder's entries read with getdents64(2) into the caller's
 * buffer (dir.c).
 */
#ifndef CORDON_DIR_H
#define CORDON_DIR_H

#include <dirent.h>
#include <stddef.h>

#define DIR_BUF		16384

struct dir_reader {
	int		 dr_fd;
	size_t		 dr_len;
	size_t		 dr_off;
	char		 dr_buf[DIR_BUF] __attribute__((aligned(8)));
};

void			 dir_begin(struct dir_reader *, int);
const struct dirent64	*dir_next(struct dir_reader *);

#endif
