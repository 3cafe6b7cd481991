/*
 * dir.c: a folder's entries read straight from the descriptor with
 * getdents64(2), as readdir(3) reads them, without what fdopendir(3)
 * adds for each folder: an fstat, two fcntl and a buffer allocated,
 * then a close of its own.  The walks of the writable folders
 * (fsscan.c, gwalk.c) open a thousand folders or more, and keep each
 * descriptor for the *at calls that follow the listing.
 */
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <string.h>

#include "lib/dir.h"

/* Begins reading the folder fd (open, O_DIRECTORY), from its start. */
void
dir_begin(struct dir_reader *r, int fd)
{
	r->dr_fd = fd;
	r->dr_len = r->dr_off = 0;
}

/*
 * The next entry, "." and ".." among them; NULL at the end (errno 0)
 * or on an error (errno set).
 */
const struct dirent64 *
dir_next(struct dir_reader *r)
{
	const struct dirent64	*de;
	ssize_t			 n;

	if (r->dr_off >= r->dr_len) {
		if ((n = getdents64(r->dr_fd, r->dr_buf, sizeof(r->dr_buf))) <=
		    0) {
			if (n == 0)
				errno = 0;
			return NULL;
		}
		r->dr_len = (size_t)n;
		r->dr_off = 0;
	}
	de = (const struct dirent64 *)(r->dr_buf + r->dr_off);
	r->dr_off += de->d_reclen;
	return de;
}
