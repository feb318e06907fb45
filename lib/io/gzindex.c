/* SPDX-License-Identifier: MIT */
/*
 * gzindex.c - a gzip member's index of pieces, and inflating the member on
 * many threads through it (see gzindex.h).
 *
 * Why: a 2.75 GB filter (1e9 keys at 1e-4) deflates to ~80 MB when it is
 * mostly empty, and one thread inflates it at ~500 MB/s: five seconds
 * before the first key is asked about, the other cores idle.
 *
 * How: the file is mapped; threads claim entries of the index (those
 * that start in one huge page of their region together) and inflate
 * each with a raw inflater (no wrapper: an entry starts in the middle of
 * the member) straight into the regions it covers, computing the CRC-32
 * of what it wrote. zlib remains the format; the work is libdeflate's
 * where it is faster (issue 33: a dense 1 GiB filter loaded at half the
 * speed the machine allows): a deflated entry whole in one region is
 * inflated by it in one call, 2-3 times zlib's speed.
 * Entries of stored blocks alone (a full filter's) are read here, block by
 * block, with pread(2) into their place, and their CRC-32 made while they
 * are in cache (crc.h, as every CRC here: zlib's was a quarter of a dense
 * load). Mostly-zero entries go by way of scratch, page by page. The
 * calling thread then combines the CRCs in order and checks them, and the
 * length, against the trailer.
 * Entries marked zero (gzindex.h) are settled first, on the calling
 * thread: one of each shape inflated and checked, the rest compared byte
 * for byte with it, all given its CRC, and none claimed by the threads.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef ZLIB_CONST
#define ZLIB_CONST
#endif
#include <zlib.h>
#include <libdeflate.h>

#include "bytes.h"
#include "crc.h"
#include "gzindex.h"
#include "gzin.h"

#define SUBFIELD_HEAD 4		/* SI1, SI2, LEN */
#define TABLE_HEAD 8		/* entries in use, reserved */
#define ENTRY_LEN 8
#define TRAILER_LEN 10		/* the empty final block (03 00), CRC-32, ISIZE */
#define STORED_HEAD 5		/* a stored block's: 3 bits and padding, LEN, NLEN */
#define FLAG_FHCRC 2
#define FLAG_FEXTRA 4
#define FLAG_FNAME 8
#define FLAG_FCOMMENT 16
#define FLAGS_RESERVED 0xe0
#define RAW_WINDOW (-15)
#define SCRATCH ((size_t)64 << 10)	/* where content bound for nowhere is inflated */
#define PAGE 4096			/* copy_set_pages' unit */
#define CLAIM_SPAN ((uintptr_t)2 << 20)	/* a huge page: one thread writes each (group_entries) */
#define SPARSE_RATIO 8			/* content over deflated bytes from which a run is sparse */
#define INFLATE_MAX ((uint64_t)1 << 30)	/* avail_out is a 32-bit uInt */
/* An entry's deflated bytes at most, for a content of len: stored blocks add 5 per 65535. */
#define DEFLATED_BOUND(len) ((len) + (len) / 8 + 1024)

size_t gzindex_plan(uint64_t pieces, size_t piece_max, uint64_t *group)
{
	uint64_t per;

	if (pieces < GZINDEX_PIECES_MIN)
		return 0;
	per = (pieces + GZINDEX_SLOTS_MAX - 1) / GZINDEX_SLOTS_MAX;
	/* 31 bits: the top bit of a deflated count is a zero mark */
	if (per > INT32_MAX / DEFLATED_BOUND((uint64_t)piece_max))
		return 0;
	*group = per;
	return (size_t)((pieces + per - 1) / per);
}

size_t gzindex_extra_len(size_t slots)
{
	return SUBFIELD_HEAD + TABLE_HEAD + ENTRY_LEN * slots;
}

void gzindex_encode(unsigned char *out, size_t slots, const struct gzindex_entry *e, size_t n)
{
	size_t len = gzindex_extra_len(slots);

	memset(out, 0, len);
	out[0] = 'B';
	out[1] = 'I';
	bytes_put_le(out + 2, len - SUBFIELD_HEAD, 2);
	bytes_put_le(out + 4, n, 4);
	for (size_t i = 0; i < n && i < slots; i++)
		if (e[i].zero)
			bytes_put_le(out + 8, GZINDEX_ZERO_MARKS, 4);	/* marks only where there are some */
	for (size_t i = 0; i < n && i < slots; i++) {
		uint32_t deflated = e[i].deflated | (e[i].zero ? GZINDEX_ZERO_BIT : 0);

		bytes_put_le(out + SUBFIELD_HEAD + TABLE_HEAD + ENTRY_LEN * i, e[i].content, 4);
		bytes_put_le(out + SUBFIELD_HEAD + TABLE_HEAD + ENTRY_LEN * i + 4, deflated, 4);
	}
}

/* ---- reading the index ------------------------------------------------ */

struct job {
	const unsigned char *map;	/* the whole file */
	int fd;				/* and where it is read (read_stored) */
	size_t n;			/* entries */
	const unsigned char *table;	/* the first entry in the header */
	uint64_t *coff;			/* entry i's deflated bytes start here in the file */
	uint64_t *uoff;			/* and its content here in the member's content */
	uLong *crc;			/* entry i's CRC-32, once inflated */
	int marks;			/* deflated counts carry zero marks (GZINDEX_ZERO_MARKS) */
	unsigned char *settled;		/* entry i is a zero run, checked: not to inflate */
	int zeroed;			/* the regions hold zeros already */
	const struct gzindex_region *regions;
	size_t nregions;
	size_t *group;			/* group g: entries group[g] to group[g + 1] - 1 */
	size_t ngroups;
	atomic_size_t next;		/* the next group to claim */
	atomic_int failed;
	atomic_uint_least64_t done;	/* content bytes inflated */
};

static uint32_t entry_content(const struct job *j, size_t i)
{
	return (uint32_t)bytes_get_le(j->table + ENTRY_LEN * i, 4);
}

static uint32_t entry_deflated(const struct job *j, size_t i)
{
	uint32_t d = (uint32_t)bytes_get_le(j->table + ENTRY_LEN * i + 4, 4);

	return j->marks ? d & ~GZINDEX_ZERO_BIT : d;
}

static int entry_zero(const struct job *j, size_t i)
{
	return j->marks && (bytes_get_le(j->table + ENTRY_LEN * i + 4, 4) & GZINDEX_ZERO_BIT);
}

/*
 * The gzip header of the mapped file: the index's table and entry count,
 * and where the deflate stream starts. -1 unless it is a header as pgzip
 * writes it (extra field, maybe a header CRC, which must then be right).
 */
static int parse_header(struct job *j, size_t size, uint64_t *stream)
{
	const unsigned char *p = j->map, *data;
	size_t xlen, len, end;

	if (size < 12 + TRAILER_LEN || p[0] != 0x1f || p[1] != 0x8b || p[2] != Z_DEFLATED)
		return -1;
	if (!(p[3] & FLAG_FEXTRA) || (p[3] & (FLAG_FNAME | FLAG_FCOMMENT | FLAGS_RESERVED)))
		return -1;
	xlen = (size_t)bytes_get_le(p + 10, 2);
	end = 12 + xlen + (p[3] & FLAG_FHCRC ? 2 : 0);
	if (end > size - TRAILER_LEN)
		return -1;
	if ((p[3] & FLAG_FHCRC) &&
	    (crc32(0L, p, (uInt)(12 + xlen)) & 0xffffu) != bytes_get_le(p + 12 + xlen, 2))
		return -1;
	data = gzin_find_subfield(p + 12, xlen, 'B', 'I', &len);
	if (data == NULL || len < TABLE_HEAD)
		return -1;
	j->n = (size_t)bytes_get_le(data, 4);
	j->marks = bytes_get_le(data + 4, 4) == GZINDEX_ZERO_MARKS;
	if (j->n == 0 || (bytes_get_le(data + 4, 4) != 0 && !j->marks) ||
	    j->n > (len - TABLE_HEAD) / ENTRY_LEN)
		return -1;
	j->table = data + TABLE_HEAD;
	*stream = end;
	return 0;
}

/* Every entry's place, in the file and in the content; -1 unless they fill both exactly. */
static int lay_out(struct job *j, uint64_t stream, size_t size, uint64_t content)
{
	uint64_t c = stream, u = 0;

	j->coff = malloc(j->n * sizeof *j->coff);
	j->uoff = malloc(j->n * sizeof *j->uoff);
	j->crc = malloc(j->n * sizeof *j->crc);
	j->settled = calloc(j->n, 1);
	if (j->coff == NULL || j->uoff == NULL || j->crc == NULL || j->settled == NULL)
		return -1;
	for (size_t i = 0; i < j->n; i++) {
		if (entry_deflated(j, i) == 0)
			return -1;
		j->coff[i] = c;
		j->uoff[i] = u;
		c += entry_deflated(j, i);
		u += entry_content(j, i);
	}
	return c == (uint64_t)size - TRAILER_LEN && u == content && j->map[c] == 0x03 && j->map[c + 1] == 0 ? 0
													       : -1;
}

/* The region holding content offset u, and u's offset within it. */
static size_t region_of(const struct job *j, uint64_t u, uint64_t *at)
{
	size_t r = 0;

	while (r < j->nregions && u >= j->regions[r].len) {
		u -= j->regions[r].len;
		r++;
	}
	*at = u;
	return r;
}

static int all_zero(const unsigned char *p, size_t len)
{
	size_t i = 0;

	for (uint64_t w[8]; len - i >= sizeof w; i += sizeof w) {
		memcpy(w, p + i, sizeof w);	/* any alignment; compilers make it loads */
		if ((w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7]) != 0)
			return 0;
	}
	for (; i < len; i++)
		if (p[i] != 0)
			return 0;
	return 1;
}

/*
 * dst[0..len) from src, skipping each page of src that is all zeros: dst
 * holds zeros already (its regions are zeroed), and a page never written
 * is never backed. Pages are counted from dst (page-aligned where a
 * filter's bits start; elsewhere the cut is merely less exact).
 */
static void copy_set_pages(unsigned char *dst, const unsigned char *src, size_t len)
{
	for (size_t off = 0, n; off < len; off += n) {
		n = PAGE - ((uintptr_t)(dst + off) % PAGE);
		if (n > len - off)
			n = len - off;
		if (!all_zero(src + off, n))
			memcpy(dst + off, src + off, n);
	}
}

/* Mostly zeros (deflated to under an eighth): by way of scratch, so zero pages stay unbacked. */
static int entry_sparse(const struct job *j, size_t i)
{
	return j->zeroed && (uint64_t)entry_deflated(j, i) * SPARSE_RATIO < entry_content(j, i);
}

/*
 * Inflate entry i into its regions (zero_only: into scratch alone, every
 * byte of it 0). 0 when it made exactly its content from exactly its
 * deflated bytes and stopped on a block boundary (the next entry starts a
 * block there), not in a final block; else -1.
 */
static int inflate_entry(struct job *j, z_stream *zs, unsigned char *scratch, size_t i, int zero_only)
{
	uint64_t at, left = entry_content(j, i);
	size_t r = region_of(j, j->uoff[i], &at);
	uLong crc = crc32(0L, NULL, 0);
	int sparse = entry_sparse(j, i);
	int ret;

	if (inflateReset(zs) != Z_OK)
		return -1;
	zs->next_in = j->map + j->coff[i];
	zs->avail_in = entry_deflated(j, i);
	while (left > 0) {
		uint64_t span, cap;
		unsigned char *dst;

		for (; r < j->nregions && at == j->regions[r].len; r++)
			at = 0;
		if (r == j->nregions)
			return -1;
		span = j->regions[r].len - at < left ? j->regions[r].len - at : left;
		dst = j->regions[r].dst && !zero_only && !sparse ? j->regions[r].dst + at : scratch;
		cap = dst != scratch ? (span < INFLATE_MAX ? span : INFLATE_MAX) : (span < SCRATCH ? span : SCRATCH);
		zs->next_out = dst;
		zs->avail_out = (uInt)cap;
		ret = inflate(zs, Z_NO_FLUSH);
		if (zero_only && !all_zero(dst, cap - zs->avail_out))
			return -1;
		if (sparse && j->regions[r].dst != NULL)
			copy_set_pages(j->regions[r].dst + at, scratch, cap - zs->avail_out);
		crc = crc_update((uint32_t)crc, dst, (size_t)(cap - zs->avail_out));
		at += cap - zs->avail_out;
		left -= cap - zs->avail_out;
		if (ret != Z_OK)	/* the end of the member, damage, or out of input */
			return -1;
	}
	/*
	 * What input is left may only end blocks (an end-of-block code, the
	 * empty stored block of a sync flush), a block at a time (Z_BLOCK),
	 * making no content. zlib says where each call stopped in data_type:
	 * 128 at a block boundary, 64 in a final block, the low bits those
	 * left unused in the last byte, which must be none. (Asked again with
	 * nothing to read, it no longer says: hence checked after the last call
	 * that read.)
	 */
	while (zs->avail_in > 0) {
		uInt before = zs->avail_in;

		zs->next_out = scratch;	/* room for one byte, which must not come */
		zs->avail_out = 1;
		ret = inflate(zs, Z_BLOCK);
		if (ret != Z_OK || zs->avail_out == 0 || zs->avail_in == before)
			return -1;
	}
	if (!(zs->data_type & 128) || (zs->data_type & (64 | 7)))
		return -1;
	j->crc[i] = crc;
	return 0;
}

/* Entry i's content, in its regions, cleared. */
static void clear_entry(const struct job *j, size_t i)
{
	uint64_t at, left = entry_content(j, i);

	for (size_t r = region_of(j, j->uoff[i], &at); left > 0 && r < j->nregions; r++, at = 0) {
		uint64_t span = j->regions[r].len - at < left ? j->regions[r].len - at : left;

		if (j->regions[r].dst != NULL)
			memset(j->regions[r].dst + at, 0, (size_t)span);
		left -= span;
	}
}

/* Whether marked entries a and b are the same deflated bytes (then the same content). */
static int same_run(const struct job *j, size_t a, size_t b)
{
	return entry_content(j, a) == entry_content(j, b) && entry_deflated(j, a) == entry_deflated(j, b) &&
	       memcmp(j->map + j->coff[a], j->map + j->coff[b], entry_deflated(j, a)) == 0;
}

#define SHAPES_MAX 8	/* zero runs of distinct deflated bytes remembered: a run's length, the last */

/*
 * The entries marked zero, settled on this thread: the first of each
 * shape inflated and checked to be zeros, the others the same bytes as
 * one of those; each given its CRC, cleared unless the regions are zero
 * already. 0, or -1 when a mark is wrong.
 */
static int settle_zero_runs(struct job *j, z_stream *zs, unsigned char *scratch)
{
	size_t shape[SHAPES_MAX], nshapes = 0;

	for (size_t i = 0; i < j->n; i++) {
		size_t s = 0;

		if (!entry_zero(j, i))
			continue;
		while (s < nshapes && !same_run(j, shape[s], i))
			s++;
		if (s < nshapes) {
			j->crc[i] = j->crc[shape[s]];
		} else {
			if (inflate_entry(j, zs, scratch, i, 1) < 0)
				return -1;
			if (nshapes < SHAPES_MAX)
				shape[nshapes++] = i;
		}
		if (!j->zeroed)
			clear_entry(j, i);
		j->settled[i] = 1;
		atomic_fetch_add(&j->done, entry_content(j, i));
	}
	return 0;
}

/* A thread's means of inflating: zlib's stream, and libdeflate's for whole entries. */
struct inflater {
	z_stream zs;
	unsigned char *scratch;			/* SCRATCH bytes */
	struct libdeflate_decompressor *whole;
	unsigned char *in;			/* an entry's bytes and a final block */
	size_t in_cap;
};

/* Where entry i goes when it can go whole: one region's memory, holding all of it; else NULL. */
static unsigned char *whole_target(const struct job *j, size_t i)
{
	uint64_t at;
	size_t r = region_of(j, j->uoff[i], &at);

	if (r == j->nregions || j->regions[r].dst == NULL || j->regions[r].len - at < entry_content(j, i))
		return NULL;
	return j->regions[r].dst + at;
}

/*
 * Entry i inflated whole by libdeflate, which is 2-3 times zlib's speed on
 * deflated blocks, straight into its region; -1 when it cannot be (then
 * zlib takes the entry, and names nothing: it fails the same way on
 * damage). Only a deflated entry (stored blocks are copies, as fast
 * either way), whole in a region that holds no zeros to keep unbacked.
 * libdeflate wants a stream that ends in a final block, which no piece
 * has (each ends on a byte boundary, after a sync flush): the entry's
 * bytes are copied and an empty final block (03 00) put after them, and
 * every byte of that must be used, to exactly the entry's content.
 */
static int inflate_whole(struct job *j, struct inflater *t, size_t i)
{
	size_t in_len = entry_deflated(j, i), out_len = entry_content(j, i), used = 0, made = 0;
	unsigned char *dst = whole_target(j, i);

	if (dst == NULL || entry_sparse(j, i) || in_len >= out_len)
		return -1;
	if (in_len + 2 > t->in_cap) {
		unsigned char *grown = realloc(t->in, in_len + 2);

		if (grown == NULL)
			return -1;
		t->in = grown;
		t->in_cap = in_len + 2;
	}
	memcpy(t->in, j->map + j->coff[i], in_len);
	t->in[in_len] = 0x03;
	t->in[in_len + 1] = 0x00;
	if (libdeflate_deflate_decompress_ex(t->whole, t->in, in_len + 2, dst, out_len, &used, &made) !=
		    LIBDEFLATE_SUCCESS ||
	    used != in_len + 2 || made != out_len)
		return -1;
	j->crc[i] = crc_update(0, dst, out_len);
	return 0;
}

/* n bytes of the file at off into buf, EINTR retried: 0, or -1 (an error, or the file ended). */
static int read_at(int fd, unsigned char *buf, size_t n, uint64_t off)
{
	while (n > 0) {
		ssize_t got = pread(fd, buf, n, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		buf += got;
		n -= (size_t)got;
		off += (uint64_t)got;
	}
	return 0;
}

/*
 * Entry i when it is stored blocks alone, as a full filter's chunks are
 * (random bits do not shrink): each block's bytes read with pread(2)
 * straight into its region, and their CRC-32 made while they are still in
 * cache. Copying them out of the mapping instead cost a page fault for
 * every 64 KiB of the file and a fifth more time (issue 33). Each read
 * takes the next block's head with it where those five bytes land on
 * content that a later block of the entry overwrites. -1 when the entry
 * is not exactly that (another kind of block, a final one, lengths that
 * disagree or do not add up to the entry, a read that fails): then the
 * inflaters take the entry, rewrite it whole and judge. A stored block is
 * byte-aligned here (each piece starts on a byte boundary, and a stored
 * block ends on one); the head byte's five high bits are padding, which
 * zlib ignores too.
 */
static int read_stored(struct job *j, size_t i)
{
	uint64_t at = j->coff[i], end = at + entry_deflated(j, i), left = entry_content(j, i);
	unsigned char *dst = whole_target(j, i), head[STORED_HEAD];
	uint32_t crc = 0;
	int more = 1;

	if (dst == NULL || entry_sparse(j, i) || end - at < left + STORED_HEAD ||
	    read_at(j->fd, head, STORED_HEAD, at) < 0)
		return -1;
	while (more) {
		size_t len = (size_t)bytes_get_le(head + 1, 2), with_head;

		/* not final, type 00 (stored), NLEN the complement of LEN */
		if ((head[0] & 7) != 0 || bytes_get_le(head + 3, 2) != (~len & 0xffff) || len > left ||
		    len > end - at - STORED_HEAD)
			return -1;
		at += STORED_HEAD;
		more = end - at - len >= STORED_HEAD;
		with_head = more && left - len >= STORED_HEAD ? STORED_HEAD : 0;
		if (read_at(j->fd, dst, len + with_head, at) < 0 ||
		    (more && !with_head && read_at(j->fd, head, STORED_HEAD, at + len) < 0))
			return -1;
		if (with_head)
			memcpy(head, dst + len, STORED_HEAD);
		crc = crc_update(crc, dst, len);
		dst += len;
		left -= len;
		at += len;
	}
	if (at != end || left != 0)
		return -1;
	j->crc[i] = crc;
	return 0;
}

static int inflater_init(struct inflater *t)
{
	memset(t, 0, sizeof *t);
	t->scratch = malloc(SCRATCH);
	t->whole = libdeflate_alloc_decompressor();
	if (t->scratch == NULL || t->whole == NULL || inflateInit2(&t->zs, RAW_WINDOW) != Z_OK) {
		free(t->scratch);
		if (t->whole != NULL)
			libdeflate_free_decompressor(t->whole);
		return -1;
	}
	return 0;
}

static void inflater_end(struct inflater *t)
{
	inflateEnd(&t->zs);
	free(t->scratch);
	free(t->in);
	libdeflate_free_decompressor(t->whole);
}

/* Entry i: inflated (or read) into place, or -1. */
static int take_entry(struct job *j, struct inflater *t, size_t i)
{
	if (read_stored(j, i) < 0 && inflate_whole(j, t, i) < 0 && inflate_entry(j, &t->zs, t->scratch, i, 0) < 0)
		return -1;
	atomic_fetch_add(&j->done, entry_content(j, i));
	return 0;
}

/* Claim groups of entries and inflate them until none is left or one failed. */
static void run(struct job *j, gzindex_progress_fn *progress, void *ctx)
{
	struct inflater t;

	if (inflater_init(&t) < 0) {
		atomic_store(&j->failed, 1);
		return;
	}
	while (!atomic_load(&j->failed)) {
		size_t g = atomic_fetch_add(&j->next, 1);

		if (g >= j->ngroups)
			break;
		for (size_t i = j->group[g]; i < j->group[g + 1]; i++) {
			if (j->settled[i])
				continue;
			if (take_entry(j, &t, i) < 0) {
				atomic_store(&j->failed, 1);
				break;
			}
			if (progress)
				progress(ctx, atomic_load(&j->done));
		}
	}
	inflater_end(&t);
}

/* The huge page entry i's content starts in, or (written piecewise) its place in the content. */
static uintptr_t entry_span(const struct job *j, size_t i)
{
	const unsigned char *dst = whole_target(j, i);

	return dst != NULL ? (uintptr_t)dst / CLAIM_SPAN : UINTPTR_MAX - (uintptr_t)(j->uoff[i] / CLAIM_SPAN);
}

/*
 * The entries in groups that threads claim whole: those that start in one
 * huge page of their region go together. Claimed one by one, two threads
 * wrote the two 1 MiB halves of a page at once, and each faulted in (and
 * cleared) a huge page of its own, one of them then thrown away: a dense
 * 1 GiB load cleared 1.45 times what the file's bytes read into fresh
 * memory clear (perf, 2026-12-02; issue 33). 0, or -1 without memory.
 */
static int group_entries(struct job *j)
{
	uintptr_t span = 0;	/* the last entry's */

	j->group = malloc((j->n + 1) * sizeof *j->group);
	if (j->group == NULL)
		return -1;
	j->ngroups = 0;
	for (size_t i = 0; i < j->n; i++) {
		uintptr_t here = entry_span(j, i);

		if (i == 0 || here != span)
			j->group[j->ngroups++] = i;
		span = here;
	}
	j->group[j->ngroups] = j->n;
	return 0;
}

static void *worker_main(void *arg)
{
	run(arg, NULL, NULL);
	return NULL;
}

/* Up to want workers, with every signal blocked (handlers run on the caller); how many started. */
static size_t start_workers(struct job *j, pthread_t *tid, size_t want)
{
	sigset_t all, old;
	size_t started = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (started < want && pthread_create(&tid[started], NULL, worker_main, j) == 0)
		started++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return started;
}

/* settle_zero_runs with a stream and scratch of its own. */
static int settle_one_thread(struct job *j)
{
	unsigned char *scratch = malloc(SCRATCH);
	z_stream zs;
	int ret = -1;

	memset(&zs, 0, sizeof zs);
	if (scratch != NULL && inflateInit2(&zs, RAW_WINDOW) == Z_OK) {
		ret = settle_zero_runs(j, &zs, scratch);
		inflateEnd(&zs);
	}
	free(scratch);
	return ret;
}

/* Inflate every entry on threads threads; then the CRCs, combined, against the trailer. */
static int inflate_all(struct job *j, size_t size, uint64_t content, int threads,
		       gzindex_progress_fn *progress, void *ctx)
{
	size_t want = threads > 1 ? (size_t)threads - 1 : 0, started;
	pthread_t *tid = NULL;
	uLong crc = crc32(0L, NULL, 0);

	if ((j->marks && settle_one_thread(j) < 0) || group_entries(j) < 0)
		return -1;
	if (want > j->ngroups - 1)
		want = j->ngroups - 1;
	if (want > 0 && (tid = malloc(want * sizeof *tid)) == NULL)
		want = 0;
	started = tid != NULL ? start_workers(j, tid, want) : 0;
	run(j, progress, ctx);
	for (size_t t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	free(tid);
	if (atomic_load(&j->failed))
		return -1;
	for (size_t i = 0; i < j->n; i++)
		crc = crc32_combine(crc, j->crc[i], (z_off_t)entry_content(j, i));
	return crc == bytes_get_le(j->map + size - 8, 4) &&
		       (content & 0xffffffffu) == bytes_get_le(j->map + size - 4, 4) ? 0 : -1;
}

int gzindex_inflate(int fd, const struct gzindex_region *regions, size_t nregions, int threads,
		    int zeroed, gzindex_progress_fn *progress, void *ctx)
{
	struct job j;
	struct stat st;
	uint64_t content = 0, stream;
	void *map;
	size_t size;
	int ret = -1;

	for (size_t r = 0; r < nregions; r++)
		content += regions[r].len;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 12 + TRAILER_LEN ||
	    (uint64_t)st.st_size > SIZE_MAX)
		return -1;
	size = (size_t)st.st_size;
	map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return -1;
	memset(&j, 0, sizeof j);
	j.map = map;
	j.fd = fd;
	j.regions = regions;
	j.nregions = nregions;
	j.zeroed = zeroed;
	atomic_init(&j.next, 0);
	atomic_init(&j.failed, 0);
	atomic_init(&j.done, 0);
	if (parse_header(&j, size, &stream) == 0 && lay_out(&j, stream, size, content) == 0)
		ret = inflate_all(&j, size, content, threads, progress, ctx);
	free(j.coff);
	free(j.uoff);
	free(j.crc);
	free(j.settled);
	free(j.group);
	munmap(map, size);
	return ret;
}
