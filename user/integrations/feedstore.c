// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Blocklist feeds on disk (feedstore.h): per feed NAME in the store's
 * directory, NAME.def (its definition), NAME.list (the last list that
 * parsed whole, exactly as fetched) and NAME.state (ETag, Last-Modified,
 * when, how many, the last error). Each file is written to a temporary
 * name and renamed over the old one, so a reader sees the old or the new,
 * never half. HTTP(S) through libcurl; conditional requests make an
 * unchanged feed cost the server a 304.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <curl/curl.h>
#include "integrations/feedstore.h"
#include "integrations/geo.h"

/* The store's root; a directory per bpffs root under it. */
#define FEED_STORE	"/var/lib/weir/feeds"
/* The largest list a feed may be: 1M IPv6 prefixes with comments fit. */
#define FEED_BODY_MAX	(256u << 20)
/* One fetch's time limit, and its connect time limit, in seconds. */
#define FEED_TIMEOUT_S		60
#define FEED_CONNECT_S		10

/* The store's directory for the current root: FEED_STORE/<root, / as ->. */
static int dir_path(char *buf, size_t len)
{
	const char *p;
	size_t n;

	n = snprintf(buf, len, "%s/", FEED_STORE);
	for (p = opts.root; *p && n + 1 < len; p++)
		if (p != opts.root || *p != '/')
			buf[n++] = *p == '/' ? '-' : *p;
	if (n + 1 >= len)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return 0;
}

int wr_feed_dir(char *buf, size_t len)
{
	int err = dir_path(buf, len);

	return err ? err : wr_mkdir_p(buf);
}

int wr_feed_store_clear(void)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct dirent *e;
	int err = dir_path(dir, sizeof(dir));
	DIR *dp;

	if (err)
		return err;
	dp = opendir(dir);
	if (!dp)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(dp))) {
		if (e->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path) &&
		    unlink(path) && !err)
			err = -errno;
	}
	closedir(dp);
	if (!err && rmdir(dir))
		err = -errno;
	return err;
}

int wr_feed_action_parse(const char *s)
{
	if (!strcmp(s, "deny"))
		return WEIR_FA_DENY;
	if (!strcmp(s, "allow"))
		return WEIR_FA_ALLOW;
	if (!strcmp(s, "match"))
		return WR_FEED_MATCH;
	if (!strncmp(s, "limit-class", 11))
		return wr_feed_class_parse(s);
	return -EINVAL;
}

const char *wr_feed_action_name(int action)
{
	if (wr_feed_class_name(action))
		return wr_feed_class_name(action);
	return action == WEIR_FA_ALLOW ? "allow" : action == WR_FEED_MATCH ? "match" : "deny";
}

bool wr_feed_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n && n < WR_FEED_NAME_MAX && s[0] != '.' && s[0] != '-' &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") == n;
}

int wr_feed_source_set(struct wr_feed_def *d, const char *src, bool url, char *why, size_t len)
{
	if (!src[0] || strlen(src) >= sizeof(d->source)) {
		snprintf(why, len, "a source of 1 to %zu bytes", sizeof(d->source) - 1);
		return -EINVAL;
	}
	if (strpbrk(src, "\n\r")) {
		snprintf(why, len, "a source on one line");
		return -EINVAL;
	}
	if (url && strncasecmp(src, "http://", 7) && strncasecmp(src, "https://", 8)) {
		snprintf(why, len, "an http:// or https:// URL, not \"%.80s\"", src);
		return -EINVAL;
	}
	if (!url && src[0] != '/') {
		snprintf(why, len, "an absolute path, not \"%.80s\"", src);
		return -EINVAL;
	}
	strcpy(d->source, src);
	d->url = url;
	return 0;
}

int wr_feed_geo_set(struct wr_feed_def *d, const char *db, const char *countries, const char *asns,
		    char *why, size_t len)
{
	struct wr_geo_query q = { 0 };

	if (wr_feed_source_set(d, db, false, why, len))
		return -EINVAL;
	if ((!countries || !*countries) && (!asns || !*asns)) {
		snprintf(why, len, "a geo feed needs country CC,... or asn N,... (or both)");
		return -EINVAL;
	}
	if ((countries && strlen(countries) >= sizeof(d->countries)) ||
	    (asns && strlen(asns) >= sizeof(d->asns))) {
		snprintf(why, len, "a country or asn list of at most %zu bytes",
			 sizeof(d->countries) - 1);
		return -EINVAL;
	}
	if (countries && *countries && wr_geo_parse_countries(countries, &q, why, len))
		return -EINVAL;
	if (asns && *asns && wr_geo_parse_asns(asns, &q, why, len))
		return -EINVAL;
	snprintf(d->countries, sizeof(d->countries), "%s", countries ? countries : "");
	snprintf(d->asns, sizeof(d->asns), "%s", asns ? asns : "");
	d->geo = true;
	return 0;
}

/* DIR/NAME.EXT into buf. */
static int feed_path(char *buf, size_t len, const char *dir, const char *name, const char *ext)
{
	int n = snprintf(buf, len, "%s/%s.%s", dir, name, ext);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Write len bytes to path through path.tmp and a rename. */
static int write_atomic(const char *path, const char *data, size_t len)
{
	char tmp[PATH_MAX];
	size_t off = 0;
	int fd, err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (!err && off < len) {
		ssize_t w = write(fd, data + off, len - off);

		if (w < 0 && errno != EINTR)
			err = -errno;
		else if (w > 0)
			off += w;
	}
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* A whole regular file into *buf (NUL-terminated), at most max bytes. */
static int read_file(const char *path, char **buf, size_t *len, size_t max, struct stat *st)
{
	size_t off = 0;
	char *b;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if ((size_t)st->st_size > max) {
		close(fd);
		return -EFBIG;
	}
	b = malloc(st->st_size + 1);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	while (off < (size_t)st->st_size) {
		ssize_t r = read(fd, b + off, st->st_size - off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		off += r;
	}
	close(fd);
	b[off] = '\0';
	*buf = b;
	*len = off;
	return 0;
}

/* key=value lines: the value of key into out (empty when absent). */
static void kv_get(const char *text, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	const char *p = text;

	out[0] = '\0';
	while (p && *p) {
		if (!strncmp(p, key, kl) && p[kl] == '=') {
			size_t n = strcspn(p + kl + 1, "\n");

			snprintf(out, len, "%.*s", (int)n, p + kl + 1);
			return;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
}

int wr_feed_def_save(const char *dir, const struct wr_feed_def *d)
{
	char path[PATH_MAX], text[WR_FEED_SRC_MAX + 2 * WR_FEED_GEO_MAX + 256];
	int n, err = feed_path(path, sizeof(path), dir, d->name, "def");

	if (err)
		return err;
	n = snprintf(text, sizeof(text), "%s=%s\naction=%s\nrefresh=%u\norigin=%s\n",
		     d->url ? "url" : d->geo ? "geo" : "file", d->source,
		     wr_feed_action_name(d->action), d->refresh_s, d->config ? "config" : "cli");
	if (d->expires && n < (int)sizeof(text))
		n += snprintf(text + n, sizeof(text) - n, "expires=%lld\n", d->expires);
	if (d->geo && n < (int)sizeof(text))
		n += snprintf(text + n, sizeof(text) - n, "country=%s\nasn=%s\n", d->countries,
			      d->asns);
	if (n >= (int)sizeof(text))
		return -ENAMETOOLONG;
	return write_atomic(path, text, n);
}

int wr_feed_def_load(const char *dir, const char *name, struct wr_feed_def *d)
{
	char path[PATH_MAX], v[WR_FEED_SRC_MAX], *text;
	struct stat st;
	size_t len;
	int err = feed_path(path, sizeof(path), dir, name, "def");

	if (err)
		return err;
	err = read_file(path, &text, &len, 64 << 10, &st);
	if (err)
		return err;
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	kv_get(text, "url", v, sizeof(v));
	d->url = v[0];
	if (!v[0]) {
		kv_get(text, "geo", v, sizeof(v));
		d->geo = v[0];
	}
	if (!v[0])
		kv_get(text, "file", v, sizeof(v));
	if (d->geo) {
		kv_get(text, "country", d->countries, sizeof(d->countries));
		kv_get(text, "asn", d->asns, sizeof(d->asns));
	}
	snprintf(d->source, sizeof(d->source), "%s", v);
	kv_get(text, "action", v, sizeof(v));
	d->action = wr_feed_action_parse(v);
	kv_get(text, "refresh", v, sizeof(v));
	d->refresh_s = strtoul(v, NULL, 10);
	kv_get(text, "origin", v, sizeof(v));
	d->config = !strcmp(v, "config");
	kv_get(text, "expires", v, sizeof(v));
	d->expires = strtoll(v, NULL, 10);
	free(text);
	if (!d->source[0] || d->action < 0 || d->refresh_s < WR_FEED_REFRESH_MIN_S ||
	    d->refresh_s > WR_FEED_REFRESH_MAX_S)
		return -EBADMSG;
	return 0;
}

static int cmp_def(const void *a, const void *b)
{
	return strcmp(((const struct wr_feed_def *)a)->name, ((const struct wr_feed_def *)b)->name);
}

int wr_feed_defs(const char *dir, struct wr_feed_def *v, int max, int *n)
{
	struct dirent *e;
	DIR *dp = opendir(dir);

	*n = 0;
	if (!dp)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(dp))) {
		size_t l = strlen(e->d_name);
		char name[WR_FEED_NAME_MAX];

		if (l < 5 || l - 4 >= sizeof(name) || strcmp(e->d_name + l - 4, ".def"))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(l - 4), e->d_name);
		if (!wr_feed_name_ok(name) || *n >= max)
			continue;
		if (!wr_feed_def_load(dir, name, &v[*n]))
			(*n)++;
		else
			pr_err("feed %s: %s/%s is unreadable or damaged; skipped", name, dir,
			       e->d_name);
	}
	closedir(dp);
	qsort(v, *n, sizeof(*v), cmp_def);
	return 0;
}

int wr_feed_expire(const char *dir, long long now)
{
	struct wr_feed_def *defs = calloc(WR_FEED_MAX, sizeof(*defs));
	int n = 0, i, gone = 0, err;

	if (!defs)
		return -ENOMEM;
	err = wr_feed_defs(dir, defs, WR_FEED_MAX, &n);
	for (i = 0; !err && i < n; i++)
		if (defs[i].expires && defs[i].expires <= now && !wr_feed_remove(dir, defs[i].name))
			gone++;
	free(defs);
	return err ? err : gone;
}

int wr_feed_remove(const char *dir, const char *name)
{
	static const char *const ext[] = { "def", "list", "state" };
	char path[PATH_MAX];
	int err = 0;
	size_t i;

	for (i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		if (feed_path(path, sizeof(path), dir, name, ext[i]))
			return -ENAMETOOLONG;
		if (unlink(path) && errno != ENOENT && !err)
			err = -errno;
	}
	return err;
}

int wr_feed_state_load(const char *dir, const char *name, struct wr_feed_state *s)
{
	char path[PATH_MAX], v[64], *text;
	struct stat st;
	size_t len;
	int err = feed_path(path, sizeof(path), dir, name, "state");

	memset(s, 0, sizeof(*s));
	if (err)
		return err;
	err = read_file(path, &text, &len, 64 << 10, &st);
	if (err)
		return err == -ENOENT ? 0 : err;
	kv_get(text, "etag", s->etag, sizeof(s->etag));
	kv_get(text, "last_modified", s->last_modified, sizeof(s->last_modified));
	kv_get(text, "error", s->error, sizeof(s->error));
	kv_get(text, "fetched", v, sizeof(v));
	s->fetched = strtoll(v, NULL, 10);
	kv_get(text, "checked", v, sizeof(v));
	s->checked = strtoll(v, NULL, 10);
	kv_get(text, "mtime", v, sizeof(v));
	s->mtime = strtoll(v, NULL, 10);
	kv_get(text, "entries", v, sizeof(v));
	s->entries = strtoull(v, NULL, 10);
	free(text);
	return 0;
}

static int state_save(const char *dir, const char *name, const struct wr_feed_state *s)
{
	char path[PATH_MAX], text[1024];
	int n, err = feed_path(path, sizeof(path), dir, name, "state");

	if (err)
		return err;
	n = snprintf(text, sizeof(text),
		     "etag=%s\nlast_modified=%s\nfetched=%lld\nchecked=%lld\nmtime=%lld\n"
		     "entries=%llu\nerror=%s\n",
		     s->etag, s->last_modified, s->fetched, s->checked, s->mtime,
		     (unsigned long long)s->entries, s->error);
	return write_atomic(path, text, n < (int)sizeof(text) ? n : (int)sizeof(text) - 1);
}

bool wr_feed_due(const char *dir, const struct wr_feed_def *d, long long now)
{
	struct wr_feed_state s;

	if (wr_feed_state_load(dir, d->name, &s) || !s.checked)
		return true;
	return now - s.checked >= (long long)d->refresh_s || now < s.checked;
}

struct fetch {
	char *buf;
	size_t len;
	bool too_big;
	struct wr_feed_state *st;	/* the response's ETag and Last-Modified go here */
};

static size_t body_cb(char *p, size_t size, size_t n, void *ctx)
{
	struct fetch *f = ctx;
	size_t add = size * n;
	char *nb;

	if (f->len + add > FEED_BODY_MAX) {
		f->too_big = true;
		return 0;
	}
	nb = realloc(f->buf, f->len + add + 1);
	if (!nb)
		return 0;
	memcpy(nb + f->len, p, add);
	f->buf = nb;
	f->len += add;
	f->buf[f->len] = '\0';
	return add;
}

/* A response header's value, trimmed, into out when the line is name's. */
static void header_take(const char *line, size_t n, const char *name, char *out, size_t len)
{
	size_t nl = strlen(name);

	if (n <= nl + 1 || strncasecmp(line, name, nl) || line[nl] != ':')
		return;
	line += nl + 1;
	n -= nl + 1;
	while (n && (*line == ' ' || *line == '\t'))
		line++, n--;
	while (n && (line[n - 1] == '\r' || line[n - 1] == '\n' || line[n - 1] == ' '))
		n--;
	if (n < len)
		snprintf(out, len, "%.*s", (int)n, line);
}

static size_t header_cb(char *p, size_t size, size_t n, void *ctx)
{
	struct fetch *f = ctx;

	header_take(p, size * n, "ETag", f->st->etag, sizeof(f->st->etag));
	header_take(p, size * n, "Last-Modified", f->st->last_modified,
		    sizeof(f->st->last_modified));
	return size * n;
}

/*
 * GET d's URL into f; 304 when not modified (old's validators sent unless
 * force). The new validators land in f->st. HTTP status, or -EIO with err.
 */
static long http_get(const struct wr_feed_def *d, const struct wr_feed_state *old, bool force,
		     struct fetch *f, char *err, size_t errlen)
{
	char ebuf[CURL_ERROR_SIZE] = "", h1[300], h2[200];
	struct curl_slist *hdr = NULL;
	long code = 0;
	CURLcode rc;
	CURL *c;

	c = curl_easy_init();
	if (!c) {
		snprintf(err, errlen, "cannot start libcurl");
		return -EIO;
	}
	if (!force && old->etag[0]) {
		snprintf(h1, sizeof(h1), "If-None-Match: %s", old->etag);
		hdr = curl_slist_append(hdr, h1);
	}
	if (!force && old->last_modified[0]) {
		snprintf(h2, sizeof(h2), "If-Modified-Since: %s", old->last_modified);
		hdr = curl_slist_append(hdr, h2);
	}
	curl_easy_setopt(c, CURLOPT_URL, d->source);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "weir/" WEIR_VERSION);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)FEED_TIMEOUT_S);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)FEED_CONNECT_S);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, body_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, f);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, f);
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(c);
	if (rc != CURLE_OK) {
		if (f->too_big)
			snprintf(err, errlen, "larger than %u MiB", FEED_BODY_MAX >> 20);
		else
			snprintf(err, errlen, "%s", ebuf[0] ? ebuf : curl_easy_strerror(rc));
		return -EIO;
	}
	return code;
}

/* One expanded prefix as a line of the feed's text. */
static int geo_line(const struct wr_cidr *c, void *ctx)
{
	struct fetch *f = ctx;
	char line[64];
	size_t n;

	format_cidr(c->family, c->addr, c->plen, line, sizeof(line) - 1);
	n = strlen(line);
	line[n++] = '\n';
	return body_cb(line, 1, n, f) == n ? 0 : -ENOMEM;
}

/*
 * A geo feed's list: the networks of its countries and ASNs in its
 * database, as text in f. 1 when the database has not changed since the
 * last fetch (and !force), 0, or -errno with why.
 */
static int geo_fetch(const struct wr_feed_def *d, const struct wr_feed_state *old, bool force,
		     struct fetch *f, struct stat *fst, char *why, size_t len)
{
	struct wr_geo_query q = { 0 };
	int n;

	if (stat(d->source, fst)) {
		snprintf(why, len, "cannot read %.200s: %s", d->source, strerror(errno));
		return -errno;
	}
	if (!force && old->fetched && old->mtime == (long long)fst->st_mtime)
		return 1;
	if ((d->countries[0] && wr_geo_parse_countries(d->countries, &q, why, len)) ||
	    (d->asns[0] && wr_geo_parse_asns(d->asns, &q, why, len)))
		return -EINVAL;
	n = wr_geo_expand(d->source, &q, geo_line, f, why, len);
	if (n < 0)
		return n;
	if (!n) {
		snprintf(why, len, "%s%.80s%s%s%.80s matches no network in %.200s",
			 d->countries[0] ? "country " : "", d->countries,
			 d->countries[0] && d->asns[0] ? ", " : "", d->asns[0] ? "asn " : "",
			 d->asns, d->source);
		return -ENOENT;
	}
	return 0;
}

int wr_feed_fetch(const char *dir, const struct wr_feed_def *d, bool force, char *err,
		  size_t errlen)
{
	struct wr_feed_state old, st;
	struct fetch f = { .st = &st };
	struct wr_feed_set set = { 0 };
	char path[PATH_MAX], why[400] = "";
	struct stat fst;
	int ret = 0;
	long code;

	wr_feed_state_load(dir, d->name, &old);
	st = old;
	st.checked = time(NULL);
	if (d->url) {
		st.etag[0] = st.last_modified[0] = '\0';
		code = http_get(d, &old, force, &f, why, sizeof(why));
		if (code == 304 && old.fetched) {
			/* Not modified: the old validators stay unless new ones came. */
			if (!st.etag[0])
				snprintf(st.etag, sizeof(st.etag), "%s", old.etag);
			if (!st.last_modified[0])
				snprintf(st.last_modified, sizeof(st.last_modified), "%s",
					 old.last_modified);
			goto unchanged;
		}
		if (code >= 0 && code != 200) {
			snprintf(why, sizeof(why), "HTTP status %ld", code);
			code = -EIO;
		}
		if (code < 0) {
			ret = -EIO;
			goto failed;
		}
	} else if (d->geo) {
		ret = geo_fetch(d, &old, force, &f, &fst, why, sizeof(why));
		if (ret == 1)
			goto unchanged;
		if (ret)
			goto failed;
		st.mtime = fst.st_mtime;
	} else {
		size_t len;

		ret = read_file(d->source, &f.buf, &len, FEED_BODY_MAX, &fst);
		if (ret) {
			snprintf(why, sizeof(why), "cannot read %.200s: %s", d->source,
				 ret == -EINVAL ? "not a regular file" : strerror(-ret));
			goto failed;
		}
		f.len = len;
		if (!force && old.fetched && old.mtime == (long long)fst.st_mtime) {
			free(f.buf);
			f.buf = NULL;
			goto unchanged;
		}
		st.mtime = fst.st_mtime;
	}
	ret = wr_feed_parse(f.buf ? f.buf : "", f.len, d->action, &set, why, sizeof(why));
	if (ret)
		goto failed;
	if (!set.n) {
		snprintf(why, sizeof(why), "no prefixes in it (an empty list is refused: a "
			 "feed that emptied is more likely broken than clean)");
		ret = -EINVAL;
		goto failed;
	}
	ret = feed_path(path, sizeof(path), dir, d->name, "list");
	if (!ret)
		ret = write_atomic(path, f.buf, f.len);
	if (ret) {
		snprintf(why, sizeof(why), "cannot store the list in %s: %s", dir, strerror(-ret));
		goto failed;
	}
	st.entries = set.n;
	st.fetched = st.checked;
	st.error[0] = '\0';
	wr_feed_set_free(&set);
	free(f.buf);
	state_save(dir, d->name, &st);
	return 1;
unchanged:
	st.error[0] = '\0';
	free(f.buf);
	state_save(dir, d->name, &st);
	return 0;
failed:
	wr_feed_set_free(&set);
	free(f.buf);
	snprintf(err, errlen, "%s", why);
	/* The list on disk and its validators stay: the next try asks as before. */
	old.checked = st.checked;
	snprintf(old.error, sizeof(old.error), "%s", why);
	state_save(dir, d->name, &old);
	return ret ? ret : -EIO;
}

int wr_feed_list_load(const char *dir, const struct wr_feed_def *d, struct wr_feed_set *out,
		      char *err, size_t errlen)
{
	char path[PATH_MAX], why[300];
	struct stat fst;
	size_t len;
	char *buf;
	int ret = feed_path(path, sizeof(path), dir, d->name, "list");

	if (!ret)
		ret = read_file(path, &buf, &len, FEED_BODY_MAX, &fst);
	if (ret == -ENOENT)
		return ret;
	if (ret) {
		snprintf(err, errlen, "feed %s: cannot read %s: %s", d->name, path, strerror(-ret));
		return ret;
	}
	ret = wr_feed_parse(buf, len, d->action, out, why, sizeof(why));
	free(buf);
	if (ret)
		snprintf(err, errlen, "feed %s: the stored list is damaged: %s", d->name, why);
	return ret;
}

int wr_feed_rebuild(const struct wr_maps *m, const char *dir, struct wr_feed_stats *st,
		    char *err, size_t errlen)
{
	struct wr_feed_def *defs;
	struct wr_feed_set all = { 0 };
	int n = 0, i, ret;

	defs = calloc(WR_FEED_MAX, sizeof(*defs));
	if (!defs)
		return -ENOMEM;
	ret = wr_feed_defs(dir, defs, WR_FEED_MAX, &n);
	for (i = 0; !ret && i < n; i++) {
		struct wr_feed_set one = { 0 };

		/* An ended feed is out at once; its removal follows. */
		if (defs[i].expires && defs[i].expires <= (long long)time(NULL))
			continue;
		/* A match feed is for rules' source sets (wr_srcset_resolve) only. */
		if (defs[i].action == WR_FEED_MATCH)
			continue;
		ret = wr_feed_list_load(dir, &defs[i], &one, err, errlen);
		if (ret == -ENOENT) {
			ret = 0;	/* never fetched yet */
			continue;
		}
		if (ret)
			break;
		ret = wr_feed_set_append(&all, &one);
		wr_feed_set_free(&one);
		if (ret)
			snprintf(err, errlen, "feeds together hold more than %u entries",
				 WR_FEED_MAX_ENTRIES);
	}
	free(defs);
	if (!ret) {
		ret = wr_feed_apply(m, &all, st);
		if (ret)
			snprintf(err, errlen, "cannot write the feed maps: %s", strerror(-ret));
	}
	wr_feed_set_free(&all);
	return ret;
}

const char *wr_geo_db_default(void)
{
	const char *e = getenv(WR_GEO_DB_ENV);

	return e && *e ? e : WR_GEO_DB_DEFAULT;
}

/* One expanded network into a set (the action is the feed maps', unused here). */
static int srcset_push(const struct wr_cidr *c, void *ctx)
{
	return wr_feed_set_push(ctx, c, 0);
}

int wr_srcset_resolve(void *ctx, const char *set, struct wr_feed_set *out, char *why, size_t len)
{
	const struct wr_srcset_src *src = ctx;
	struct wr_geo_query q = { 0 };
	char err[300] = "";
	int ret;

	memset(out, 0, sizeof(*out));
	if (!strncmp(set, "feed:", 5)) {
		struct wr_feed_def d;

		ret = src->dir ? wr_feed_def_load(src->dir, set + 5, &d) : -ENOENT;
		if (ret == -ENOENT) {
			snprintf(why, len, "src %s: unknown feed %s (weir list feed add %s ...)",
				 set, set + 5, set + 5);
			return -ENOENT;
		}
		if (ret) {
			snprintf(why, len, "src %s: the feed's definition is unreadable: %s", set,
				 strerror(-ret));
			return ret;
		}
		ret = wr_feed_list_load(src->dir, &d, out, err, sizeof(err));
		if (ret == -ENOENT) {
			snprintf(why, len, "src %s: feed %s has no list yet (never fetched)", set,
				 d.name);
			ret = -ENODATA;
		}
		else if (ret)
			snprintf(why, len, "src %s: %s", set, err);
		return ret;
	}
	if (!src->geo_db || !src->geo_db[0]) {
		snprintf(why, len, "src %s: no geo database (geo-db: in the config, or %s)", set,
			 WR_GEO_DB_ENV);
		return -ENOENT;
	}
	if (!strncmp(set, "country:", 8))
		ret = wr_geo_parse_countries(set + 8, &q, err, sizeof(err));
	else if (!strncmp(set, "asn:", 4))
		ret = wr_geo_parse_asns(set + 4, &q, err, sizeof(err));
	else
		ret = -EINVAL, snprintf(err, sizeof(err), "not a source set");
	if (ret) {
		snprintf(why, len, "src %s: %s", set, err);
		return ret;
	}
	ret = wr_geo_expand(src->geo_db, &q, srcset_push, out, err, sizeof(err));
	if (ret == 0) {
		snprintf(why, len, "src %s matches no network in %s", set, src->geo_db);
		ret = -ENOENT;
	} else if (ret < 0) {
		snprintf(why, len, "src %s: %s", set, err);
	}
	if (ret < 0) {
		wr_feed_set_free(out);
		return ret;
	}
	return 0;
}

int wr_srcsets_refresh(const struct wr_maps *m, const char *dir, const char *geo_db, char *why,
		       size_t len)
{
	struct wr_srcset_src src = { .dir = dir, .geo_db = geo_db };
	struct weir_ruleset *live = calloc(1, sizeof(*live));
	char err[400];
	int ret, n = 0, r;
	__u32 s;

	if (!live)
		return -ENOMEM;
	ret = wr_read_live(m, live);
	if (ret) {
		snprintf(why, len, "cannot read the live rules: %s", strerror(-ret));
		free(live);
		return ret;
	}
	for (s = 0; s < WEIR_MAX_SRCSETS; s++) {
		const char *set = live->srcsets[s];
		int k;

		if (!set[0] || (strncmp(set, "feed:", 5) && !geo_db))
			continue;
		/* Each set once: the first slot that holds it refills them all. */
		for (k = 0; k < (int)s; k++)
			if (!strcmp(live->srcsets[k], set))
				break;
		if (k < (int)s)
			continue;
		r = wr_srcsets_refill(m, set, wr_srcset_resolve, &src, err, sizeof(err));
		if (r < 0)
			pr_err("%s; the set keeps what it held", err);
		else
			n += r;
	}
	free(live);
	return n;
}
