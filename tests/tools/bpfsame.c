/*
 * bpfsame.c: whether two seccomp programs decide alike.
 *
 *   bpfsame OLD NEW
 *	OLD and NEW hold classic BPF programs for seccomp(2), as raw
 *	bytes or as the hex text `od -An -tx1` prints.  Runs both, in
 *	this process, on the same calls and prints the first call they
 *	decide differently, then exits 1; or prints how many calls they
 *	decided alike, and exits 0.  Exits 2 when a program cannot be
 *	read or run (an instruction seccomp does not allow, a jump out
 *	of the program, no return at its end).
 *
 * The calls: each architecture either program compares with, and one
 * neither does; each syscall number from 0 to 1023, and the same with
 * x32's bit, and each number either program compares with; with every
 * word of the arguments and the instruction pointer 0, then each word
 * in turn set to each value either program compares with (that value,
 * one more, one less, and all bits set), then random mixes of those
 * values in all words.  That is a differential check, not a proof: it
 * finds what a change in the programs' layout got wrong (a rule lost,
 * a comparison turned), as mk/same.sh uses it.
 */
#include <sys/types.h>

#include <linux/audit.h>
#include <linux/filter.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXINSNS	4096
#define MAXVALS		4096
#define DATALEN		64	/* struct seccomp_data */
#define X32_BIT		0x40000000U
#define MIXES		64

struct prog {
	struct sock_filter	 p_ins[MAXINSNS];
	size_t			 p_len;
};

struct vals {
	uint32_t		 v[MAXVALS];
	size_t			 n;
};

/* Reads a program: raw bytes, or hex pairs with spaces and newlines. */
static int
prog_read(const char *path, struct prog *p)
{
	static unsigned char	 buf[MAXINSNS * 8 * 4];
	unsigned char		 bytes[MAXINSNS * 8];
	size_t			 len, n = 0, i;
	unsigned int		 b;
	FILE			*f;
	int			 hex = 1;

	if ((f = fopen(path, "rb")) == NULL) {
		fprintf(stderr, "bpfsame: %s: %s\n", path, strerror(errno));
		return -1;
	}
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	for (i = 0; i < len; i++)
		if (strchr("0123456789abcdefABCDEF \n\t", buf[i]) == NULL)
			hex = 0;
	if (hex) {
		for (i = 0; i < len && n < sizeof(bytes); i++) {
			if (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\t')
				continue;
			if (i + 1 >= len || sscanf((char *)buf + i, "%2x",
			    &b) != 1)
				break;
			bytes[n++] = (unsigned char)b;
			i++;
		}
	} else {
		n = len < sizeof(bytes) ? len : sizeof(bytes);
		memcpy(bytes, buf, n);
	}
	if (n == 0 || n % sizeof(struct sock_filter) != 0) {
		fprintf(stderr, "bpfsame: %s: %zu bytes: no program\n", path,
		    n);
		return -1;
	}
	memcpy(p->p_ins, bytes, n);
	p->p_len = n / sizeof(struct sock_filter);
	return 0;
}

static void
vals_add(struct vals *v, uint32_t x)
{
	size_t	i;

	for (i = 0; i < v->n; i++)
		if (v->v[i] == x)
			return;
	if (v->n < MAXVALS)
		v->v[v->n++] = x;
}

/*
 * The values p compares with: those compared with the architecture word
 * go to arch, the syscall number's to nr, all (with one more and one
 * less) to any.
 */
static void
prog_values(const struct prog *p, struct vals *arch, struct vals *nr,
    struct vals *any)
{
	const struct sock_filter	*f;
	uint32_t			 loaded = UINT32_MAX;
	size_t				 i;

	for (i = 0; i < p->p_len; i++) {
		f = &p->p_ins[i];
		if (f->code == (BPF_LD | BPF_W | BPF_ABS))
			loaded = f->k;
		if (BPF_CLASS(f->code) != BPF_JMP &&
		    BPF_CLASS(f->code) != BPF_ALU)
			continue;
		if (BPF_SRC(f->code) != BPF_K || BPF_OP(f->code) == BPF_JA)
			continue;
		if (loaded == 4)
			vals_add(arch, f->k);
		if (loaded == 0)
			vals_add(nr, f->k);
		vals_add(any, f->k);
		vals_add(any, f->k + 1);
		vals_add(any, f->k - 1);
	}
}

/* Runs p on data: its return value, or -1 when p breaks a rule. */
static int64_t
prog_run(const struct prog *p, const uint32_t data[DATALEN / 4])
{
	uint32_t			 a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
	const struct sock_filter	*f;
	size_t				 pc = 0;
	uint32_t			 src;
	int				 taken;

	while (pc < p->p_len) {
		f = &p->p_ins[pc++];
		src = BPF_SRC(f->code) == BPF_X ? x : f->k;
		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
		case BPF_LDX:
			if (BPF_MODE(f->code) == BPF_ABS) {
				if (f->k % 4 != 0 || f->k >= DATALEN)
					return -1;
				a = data[f->k / 4];
			} else if (BPF_MODE(f->code) == BPF_IMM)
				*(BPF_CLASS(f->code) == BPF_LD ? &a : &x) =
				    f->k;
			else if (BPF_MODE(f->code) == BPF_LEN)
				*(BPF_CLASS(f->code) == BPF_LD ? &a : &x) =
				    DATALEN;
			else if (BPF_MODE(f->code) == BPF_MEM &&
			    f->k < BPF_MEMWORDS)
				*(BPF_CLASS(f->code) == BPF_LD ? &a : &x) =
				    mem[f->k];
			else
				return -1;
			break;
		case BPF_ST:
		case BPF_STX:
			if (f->k >= BPF_MEMWORDS)
				return -1;
			mem[f->k] = BPF_CLASS(f->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			switch (BPF_OP(f->code)) {
			case BPF_ADD: a += src; break;
			case BPF_SUB: a -= src; break;
			case BPF_MUL: a *= src; break;
			case BPF_DIV: if (src == 0) return -1; a /= src; break;
			case BPF_MOD: if (src == 0) return -1; a %= src; break;
			case BPF_OR: a |= src; break;
			case BPF_AND: a &= src; break;
			case BPF_XOR: a ^= src; break;
			case BPF_LSH: a = src < 32 ? a << src : 0; break;
			case BPF_RSH: a = src < 32 ? a >> src : 0; break;
			case BPF_NEG: a = -a; break;
			default: return -1;
			}
			break;
		case BPF_JMP:
			if (BPF_OP(f->code) == BPF_JA) {
				pc += f->k;
				break;
			}
			switch (BPF_OP(f->code)) {
			case BPF_JEQ: taken = a == src; break;
			case BPF_JGT: taken = a > src; break;
			case BPF_JGE: taken = a >= src; break;
			case BPF_JSET: taken = (a & src) != 0; break;
			default: return -1;
			}
			pc += taken ? f->jt : f->jf;
			break;
		case BPF_RET:
			return BPF_RVAL(f->code) == BPF_A ? a : f->k;
		case BPF_MISC:
			if (BPF_MISCOP(f->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default:
			return -1;
		}
	}
	return -1;
}

static const char *
arch_name(uint32_t arch)
{
	switch (arch) {
	case AUDIT_ARCH_X86_64: return "x86_64";
	case AUDIT_ARCH_I386: return "i386";
	case AUDIT_ARCH_AARCH64: return "aarch64";
	default: return "other";
	}
}

/* Both programs on data: 0 alike, 1 not (said), 2 a program broke. */
static int
compare(const struct prog *old, const struct prog *new,
    const uint32_t data[DATALEN / 4], unsigned long *n)
{
	int64_t	 ro, rn;
	int	 i;

	ro = prog_run(old, data);
	rn = prog_run(new, data);
	(*n)++;
	if (ro == rn && ro != -1)
		return 0;
	if (ro == -1 || rn == -1) {
		fprintf(stderr, "bpfsame: the %s program breaks a rule of "
		    "seccomp's BPF\n", ro == -1 ? "old" : "new");
		return 2;
	}
	printf("bpfsame: they differ: arch %s (%#x), nr %#x", arch_name(
	    data[1]), data[1], data[0]);
	for (i = 0; i < 6; i++)
		printf(", arg%d 0x%08x%08x", i, data[5 + 2 * i],
		    data[4 + 2 * i]);
	printf(": old %#llx, new %#llx\n", (unsigned long long)ro,
	    (unsigned long long)rn);
	return 1;
}

/* One call, its words 0 but the one set to each value, then mixes. */
static int
compare_call(const struct prog *old, const struct prog *new, uint32_t arch,
    uint32_t nr, const struct vals *any, unsigned long *n)
{
	uint32_t	 data[DATALEN / 4];
	size_t		 w, i;
	int		 rc, m;

	memset(data, 0, sizeof(data));
	data[0] = nr;
	data[1] = arch;
	if ((rc = compare(old, new, data, n)) != 0)
		return rc;
	for (w = 2; w < DATALEN / 4; w++) {
		for (i = 0; i < any->n; i++) {
			data[w] = any->v[i];
			if ((rc = compare(old, new, data, n)) != 0)
				return rc;
		}
		data[w] = UINT32_MAX;
		if ((rc = compare(old, new, data, n)) != 0)
			return rc;
		data[w] = 0;
	}
	for (m = 0; m < MIXES && any->n > 0; m++) {
		for (w = 2; w < DATALEN / 4; w++)
			data[w] = random() % 4 == 0 ? 0 :
			    any->v[(size_t)random() % any->n];
		if ((rc = compare(old, new, data, n)) != 0)
			return rc;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static struct prog	 old, new;
	static struct vals	 arch, nr, any;
	unsigned long		 n = 0;
	size_t			 a, i;
	int			 rc = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: bpfsame OLD NEW\n");
		return 2;
	}
	if (prog_read(argv[1], &old) == -1 || prog_read(argv[2], &new) == -1)
		return 2;
	srandom(1);
	vals_add(&arch, AUDIT_ARCH_X86_64);
	vals_add(&arch, AUDIT_ARCH_I386);
	vals_add(&arch, AUDIT_ARCH_AARCH64);
	prog_values(&old, &arch, &nr, &any);
	prog_values(&new, &arch, &nr, &any);
	for (i = 0; i < 1024; i++) {
		vals_add(&nr, (uint32_t)i);
		vals_add(&nr, (uint32_t)i | X32_BIT);
	}
	for (a = 0; a < arch.n && rc == 0; a++)
		for (i = 0; i < nr.n && rc == 0; i++)
			rc = compare_call(&old, &new, arch.v[a], nr.v[i], &any,
			    &n);
	if (rc == 0)
		printf("bpfsame: the same decisions in %lu calls (%zu and "
		    "%zu instructions)\n", n, old.p_len, new.p_len);
	return rc;
}
