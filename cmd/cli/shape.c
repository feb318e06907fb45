/* SPDX-License-Identifier: MIT */
/*
 * shape.c - the filter-shape group of options (cli_shape.h): -n, -p,
 * --layout, --key, -m, -K, --hash, --like, read the one way for every
 * program that makes filters. What a shape means for a state loaded, or
 * for a format that cannot record it, is the program's to say.
 */
#include <string.h>

#include "../cli.h"
#include "../cli_shape.h"
#include "layout.h"

/*
 * The layouts of bits saved in the bftools format, and counting where the
 * program makes counting filters (bfbuild; bfuniq's seen-set never
 * removes a key, so it has no use for counters).
 */
static enum filter_layout shape_layout(const char *arg, int counting)
{
	const struct layout_ops *l = layout_named(arg);

	if (l != NULL && (l->traits & LAYOUT_SAVED) && (counting || !(l->traits & LAYOUT_COUNTERS)))
		return l->id;
	if (counting)
		cli_usage_error("invalid layout '%s': expected 'blocked', 'classic' or 'counting'", arg);
	return cli_layout(arg);	/* refuses it, naming blocked and classic */
}

/* Note the first option that shapes the bits (a loaded filter, --like or DCSO refuse it). */
static void note(struct cli_shape *s, const char *name)
{
	if (s->first == NULL)
		s->first = name;
}

int cli_shape_option(int c, const char *arg, struct cli_shape *s)
{
	switch (c) {
	case 'n': s->capacity = cli_count("capacity", arg, 1, FILTER_M_MAX); s->capacity_given = 1; note(s, "-n"); break;
	case 'p': s->rate = cli_rate("rate", arg); s->rate_given = 1; note(s, "-p"); break;
	case CLI_OPT_LAYOUT: s->params.layout = shape_layout(arg, s->counting); s->layout_given = 1; note(s, "--layout"); break;
	case CLI_OPT_KEY: cli_hex_key("key", arg, s->params.key); s->key_given = 1; note(s, "--key"); break;
	case 'm': s->bits = cli_count("size in bits", arg, 1, FILTER_M_MAX); note(s, "-m"); break;
	case 'K': s->hashes = (uint32_t)cli_count("number of hashes", arg, 1, FILTER_K_MAX); note(s, "-K"); break;
	case CLI_OPT_HASH: s->params.hash = cli_hash(arg); note(s, "--hash"); break;
	case CLI_OPT_LIKE: s->like = arg; break;
	default: return 0;
	}
	return 1;
}
