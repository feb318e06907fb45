/* SPDX-License-Identifier: MIT */
/*
 * sipkey.c - the SipHash key policy: new filters' keys (fresh, or from
 * --key-file), keys kept outside a filter or sketch supplied from the key
 * file, and a key file that disagrees with what a file carries refused.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "filter.h"
#include "keyfile.h"
#include "layout.h"

const char *cli_key_file;
static int keys_optional;
static int dcso_readable;

void cli_keys_optional(void)
{
	keys_optional = 1;
}

void cli_dcso_readable(void)
{
	dcso_readable = 1;
}

/* Why a DCSO filter (dcso.h) cannot be used here, or NULL when it can. */
const char *cli_dcso_unusable(void)
{
	static char text[160];

	if (!dcso_readable) {
		snprintf(text, sizeof text,
			 "a DCSO bloom filter, not a bftools filter (%s does not take those)",
			 cli_progname);
		return text;
	}
	if (cli_key_file)
		return "a DCSO bloom filter has no key: --key-file does not apply";
	return NULL;
}

void cli_read_key_file(unsigned char key[16])
{
	const char *why;

	if (keyfile_read(cli_key_file, key, &why) < 0)
		cli_fatal("%s: %s", cli_key_file, why);
}

uint32_t cli_new_key(unsigned char key[16])
{
	const char *why;

	if (cli_key_file == NULL) {
		if (filter_random_key(key) < 0)
			cli_fatal("cannot get a random key: %s", strerror(errno));
		return 0;
	}
	if (access(cli_key_file, F_OK) == 0)
		cli_read_key_file(key);
	else if (keyfile_create(cli_key_file, key, &why) < 0)
		cli_fatal("%s: cannot create the key file: %s", cli_key_file, why);
	return FILTER_KEY_EXTERNAL;
}

/*
 * A loaded filter and --key-file: supply a key kept outside, or check that
 * a key file agrees with the key the filter carries.
 */
int cli_key_needed(const struct filter_params *p, const char *name, unsigned char key[16])
{
	if (p->flags & FILTER_KEY_EXTERNAL) {
		if (cli_key_file == NULL && keys_optional)
			return 0;
		if (cli_key_file == NULL)
			cli_fatal("%s: the filter's key is kept in a key file: give it with --key-file", name);
		cli_read_key_file(key);
		return 1;
	}
	if (cli_key_file) {
		cli_read_key_file(key);
		if (filter_key_fingerprint(key) != p->fingerprint)
			cli_fatal("%s: the filter carries its own key, which is not the key in %s", name, cli_key_file);
	}
	return 0;
}

void cli_apply_key_file(struct cascade *c, const char *name)
{
	unsigned char key[16];
	const char *why;

	if (cli_key_needed(cascade_params(c), name, key) && cascade_supply_key(c, key, &why) < 0)
		cli_fatal("%s: the key in %s is not this filter's key", name, cli_key_file);
}

const char *cli_key_file_disagrees(const struct cascade *c)
{
	static char text[300];
	unsigned char key[16];

	if (cli_key_file == NULL)
		return NULL;
	if (layout_has(cascade_params(c)->layout, LAYOUT_KEYLESS))
		return "a DCSO bloom filter has no key (--key-file does not apply)";
	cli_read_key_file(key);
	if (filter_key_fingerprint(key) == cascade_params(c)->fingerprint)
		return NULL;
	snprintf(text, sizeof text, "the key in %s is not this filter's key", cli_key_file);
	return text;
}

void cli_sketch_key(struct sketch *s, const char *name, int need_key)
{
	unsigned char key[16];
	const char *why;

	/* Callers pass a loaded sketch: where loading can fail they call the
	 * _Noreturn cli_fatal first, which cppcheck's cross-file pass takes
	 * for a function that returns (a false report). */
	/* cppcheck-suppress ctunullpointer */
	if (s->needs_key) {
		if (cli_key_file == NULL && !need_key)
			return;
		if (cli_key_file == NULL)
			cli_fatal("%s: the sketch's key is kept in a key file: give it with --key-file", name);
		cli_read_key_file(key);
		if (sketch_supply_key(s, key, &why) < 0)
			cli_fatal("%s: the key in %s is not this sketch's key", name, cli_key_file);
		return;
	}
	if (cli_key_file) {
		cli_read_key_file(key);
		if (filter_key_fingerprint(key) != s->fingerprint)
			cli_fatal("%s: the sketch carries its own key, which is not the key in %s", name, cli_key_file);
	}
}

const char *cli_sketch_key_file_disagrees(const struct sketch *s)
{
	static char text[300];
	unsigned char key[16];

	if (cli_key_file == NULL)
		return NULL;
	cli_read_key_file(key);
	if (filter_key_fingerprint(key) == s->fingerprint)
		return NULL;
	snprintf(text, sizeof text, "the key in %s is not this sketch's key", cli_key_file);
	return text;
}
