/*
 * test_secrets.c: the parsers of the tools' token files (secrets/
 * tokenfile.c and tokenjson.c, through secrets_parse): what the copy holds, which tokens
 * come out for which host, and what is left out.  Placeholders are
 * counted, "PH1", "PH2", ...
 */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "secrets/secrets.h"

static int	 next_ph;

static char *
counted(void)
{
	char	*s;

	xasprintf(&s, "PH%d", ++next_ph);
	return s;
}

/* Parses text as the file called name; the caller clears *tf. */
static void
parse(const char *name, const char *text, struct secret_file *tf)
{
	size_t	 i;

	next_ph = 0;
	memset(tf, 0, sizeof(*tf));
	for (i = 0; i < secrets_nformats; i++)
		if (strcmp(secrets_formats[i].sk_name, name) == 0)
			break;
	assert_true(i < secrets_nformats);
	secrets_parse(&secrets_formats[i], text, strlen(text), counted, tf);
	assert_non_null(tf->tf_text);
	assert_int_equal(strlen(tf->tf_text), tf->tf_len);
}

static void
check_secret(const struct secret *se, const char *host, const char *user,
    const char *format, const char *value, const char *ph)
{
	assert_string_equal(se->se_host, host);
	if (user == NULL)
		assert_null(se->se_user);
	else
		assert_string_equal(se->se_user, user);
	if (format == NULL)
		assert_null(se->se_format);
	else
		assert_string_equal(se->se_format, format);
	assert_string_equal(se->se_value, value);
	assert_string_equal(se->se_placeholder, ph);
}

static void
test_npmrc(void **state)
{
	struct secret_file	 tf;

	(void)state;
	parse(".npmrc",
	    "registry=https://Npm.Test/\n"
	    "; a comment _authToken=x\n"
	    "//Npm.Test:8443/path/:_authToken = \"tok1\"\n"
	    "//b.test/:_auth=dXNlcjpwYXNz\n"
	    "//c.test/:username=bob\n"
	    "//c.test/:_password=c2VjcmV0\n"
	    "//d.test/:_password=c2VjcmV0\n"
	    "_authToken=unscoped\n"
	    "//e.test/:_authToken=${NPM_TOKEN}\n"
	    "//[::1]/:_authToken=addr\n"
	    "email=a@b.test", &tf);
	assert_string_equal(tf.tf_text,
	    "registry=https://Npm.Test/\n"
	    "; a comment _authToken=x\n"
	    "//Npm.Test:8443/path/:_authToken=PH1\n"
	    "//b.test/:_auth=PH2\n"
	    "//c.test/:username=bob\n"
	    "//c.test/:_password=UEgz\n"	/* base64 of PH3 */
	    "//e.test/:_authToken=${NPM_TOKEN}\n"
	    "email=a@b.test\n");
	assert_int_equal(tf.tf_nsecrets, 3);
	check_secret(&tf.tf_secrets[0], "npm.test", NULL, "Bearer %s", "tok1",
	    "PH1");
	check_secret(&tf.tf_secrets[1], "b.test", NULL, "Basic %s",
	    "dXNlcjpwYXNz", "PH2");
	check_secret(&tf.tf_secrets[2], "c.test", "bob", NULL, "secret",
	    "PH3");
	assert_int_equal(tf.tf_nleft, 3);
	assert_non_null(strstr(tf.tf_left[0], "no username"));
	assert_non_null(strstr(tf.tf_left[1], "tied to no registry"));
	assert_non_null(strstr(tf.tf_left[2], "not a host name"));
	secrets_clear(&tf);
}

/*
 * npm's _password is base64: whole groups of four, padding only at the
 * end, no white space, no NUL in what it stands for; anything else is
 * left out, said.  A placeholder goes back as base64 of it, padded.
 */
static void
test_npmrc_base64(void **state)
{
	static const char *const bad[] = {
	    "c2Vj\t\t  cmV0", "c2V=cmV0", "c2VjcmV", "AAAA", "c2Vj*mV0",
	};
	struct secret_file	 tf;
	char			 text[256];
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "//f.test/:username=f\n"
		    "//f.test/:_password=%s\n", bad[i]);
		parse(".npmrc", text, &tf);
		assert_string_equal(tf.tf_text, "//f.test/:username=f\n");
		assert_int_equal(tf.tf_nsecrets, 0);
		assert_int_equal(tf.tf_nleft, 1);
		assert_non_null(strstr(tf.tf_left[0], "not base64"));
		secrets_clear(&tf);
	}
	parse(".npmrc", "//f.test/:username=f\n"
	    "//f.test/:_password=cGFzcw==\n", &tf);
	assert_string_equal(tf.tf_text, "//f.test/:username=f\n"
	    "//f.test/:_password=UEgx\n");	/* base64 of PH1 */
	check_secret(&tf.tf_secrets[0], "f.test", "f", NULL, "pass", "PH1");
	secrets_clear(&tf);
}

static void
test_netrc(void **state)
{
	struct secret_file	 tf;

	(void)state;
	parse(".netrc",
	    "# a comment\n"
	    "machine A.test login alice password pw1\n"
	    "machine b.test\n  login \"bob\"\n  password \"p w\"\n"
	    "machine c.test login carl password pw3 account acct\n"
	    "macdef init\ncd /pub\n\n"
	    "machine d.test login dan\n"
	    "default login anon password pw5\n", &tf);
	assert_string_equal(tf.tf_text,
	    "machine a.test login alice password PH1\n"
	    "machine c.test login carl password PH2\n"
	    "machine d.test login dan\n"
	    "default login anon\n");
	assert_int_equal(tf.tf_nsecrets, 2);
	check_secret(&tf.tf_secrets[0], "a.test", "alice", NULL, "pw1", "PH1");
	check_secret(&tf.tf_secrets[1], "c.test", "carl", NULL, "pw3", "PH2");
	assert_int_equal(tf.tf_nleft, 4);
	assert_non_null(strstr(tf.tf_left[0], "b.test"));
	assert_non_null(strstr(tf.tf_left[1], "macdef"));
	assert_non_null(strstr(tf.tf_left[2], "account of c.test"));
	assert_non_null(strstr(tf.tf_left[3], "default"));
	secrets_clear(&tf);
}

static void
test_gitcred(void **state)
{
	struct secret_file	 tf;

	(void)state;
	parse(".git-credentials",
	    "https://carol:p%40ss@Git.Test:8443\n"
	    "https://u%20x:tok@h.test/path/repo.git\n"
	    "http://dan:pw@plain.test\n"
	    "https://nopass@n.test\n"
	    "https://z:%00@nul.test\n", &tf);
	assert_string_equal(tf.tf_text,
	    "https://carol:PH1@Git.Test:8443\n"
	    "https://u%20x:PH2@h.test/path/repo.git\n"
	    "https://nopass@n.test\n");
	assert_int_equal(tf.tf_nsecrets, 2);
	check_secret(&tf.tf_secrets[0], "git.test", "carol", NULL, "p@ss",
	    "PH1");
	check_secret(&tf.tf_secrets[1], "h.test", "u x", NULL, "tok", "PH2");
	assert_int_equal(tf.tf_nleft, 2);
	assert_non_null(strstr(tf.tf_left[0], "not https"));
	assert_non_null(strstr(tf.tf_left[1], "NUL"));
	secrets_clear(&tf);
}

static void
test_pypirc(void **state)
{
	struct secret_file	 tf;

	(void)state;
	parse(".pypirc",
	    "[distutils]\nindex-servers = pypi private\n\n"
	    "[pypi]\nusername = __token__\npassword = pypi-abc\n\n"
	    "[private]\nrepository: https://u@Repo.Test:8443/legacy/\n"
	    "username: bob\npassword: pw2\n\n"
	    "[local]\nrepository = http://x.test/\npassword = pw3\n", &tf);
	assert_string_equal(tf.tf_text,
	    "[distutils]\nindex-servers = pypi private\n\n"
	    "[pypi]\nusername = __token__\npassword = PH1\n\n"
	    "[private]\nrepository: https://u@Repo.Test:8443/legacy/\n"
	    "username: bob\npassword = PH2\n\n"
	    "[local]\nrepository = http://x.test/\n");
	assert_int_equal(tf.tf_nsecrets, 2);
	check_secret(&tf.tf_secrets[0], "upload.pypi.org", "__token__", NULL,
	    "pypi-abc", "PH1");
	check_secret(&tf.tf_secrets[1], "repo.test", "bob", NULL, "pw2",
	    "PH2");
	assert_int_equal(tf.tf_nleft, 1);
	assert_non_null(strstr(tf.tf_left[0], "[local]"));
	secrets_clear(&tf);
}

static void
test_cargo(void **state)
{
	struct secret_file	 tf;

	(void)state;
	parse(".cargo/credentials.toml",
	    "# cargo login\n"
	    "[registry]\ntoken = \"cio-tok\"\nsecret-key = \"k3.secret\"\n\n"
	    "[registries.mine]\ntoken = 'mine-tok'\n"
	    "[registry.extra]\ntoken = \"a\\\"b\"\n", &tf);
	assert_string_equal(tf.tf_text,
	    "# cargo login\n"
	    "[registry]\ntoken = \"PH1\"\n\n"
	    "[registries.mine]\n"
	    "[registry.extra]\n");
	assert_int_equal(tf.tf_nsecrets, 1);
	check_secret(&tf.tf_secrets[0], "crates.io", NULL, "%s", "cio-tok",
	    "PH1");
	assert_null(strstr(tf.tf_text, "k3.secret"));
	assert_int_equal(tf.tf_nleft, 3);
	assert_non_null(strstr(tf.tf_left[0], "secret keys"));
	assert_non_null(strstr(tf.tf_left[1], "[registries.mine]"));
	assert_non_null(strstr(tf.tf_left[2], "[registry.extra]"));
	secrets_clear(&tf);
}

/*
 * The agents' JSON logins: Claude Code's access token a placeholder for
 * its API's header, its refresh token one for its token endpoint's body.
 */
/* A JWT: {"alg":"RS256"}, {"exp":1}, a signature. */
#define JWT_ID	"eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjF9.c2lnbmF0dXJl"

static void
test_agents(void **state)
{
	struct secret_file	 tf;
	const char		*ph;

	(void)state;
	parse(".claude/.credentials.json",
	    "{\"claudeAiOauth\": {\"accessToken\": \"sk-ant-oat-acc\", "
	    "\"refreshToken\": \"sk-ant-ort-ref\", \"expiresAt\": 42}, "
	    "\"mcpOAuth\": {\"srv\": {\"accessToken\": \"mcp-tok\"}}}", &tf);
	assert_int_equal(tf.tf_nsecrets, 2);
	check_secret(&tf.tf_secrets[0], "api.anthropic.com", NULL,
	    "Bearer %s", "sk-ant-oat-acc", "PH1");
	assert_null(tf.tf_secrets[0].se_path);
	assert_string_equal(tf.tf_secrets[0].se_member, "access_token");
	check_secret(&tf.tf_secrets[1], "platform.claude.com", NULL, "%s",
	    "sk-ant-ort-ref", "PH2");
	assert_string_equal(tf.tf_secrets[1].se_path, "/v1/oauth/token");
	assert_string_equal(tf.tf_secrets[1].se_member, "refresh_token");
	assert_non_null(strstr(tf.tf_text, "\"accessToken\": \"PH1\""));
	assert_non_null(strstr(tf.tf_text, "\"refreshToken\": \"PH2\""));
	assert_non_null(strstr(tf.tf_text, "\"expiresAt\": 42"));
	assert_null(strstr(tf.tf_text, "sk-ant"));
	assert_null(strstr(tf.tf_text, "mcp"));
	assert_int_equal(tf.tf_nleft, 1);
	assert_non_null(strstr(tf.tf_left[0], "MCP servers"));
	secrets_clear(&tf);

	/*
	 * Codex's: the API key and the ChatGPT login's three tokens; a JWT's
	 * placeholder is one too, its claims kept; the account and the date
	 * kept; any other member left out.
	 */
	parse(".codex/auth.json",
	    "{\"OPENAI_API_KEY\": \"sk-key\", \"tokens\": {\"id_token\": "
	    "\"" JWT_ID "\", \"access_token\": \"acc\", \"refresh_token\": "
	    "\"ref\", \"account_id\": \"acct-1\", \"more\": 1}, "
	    "\"last_refresh\": \"2025-01-01T00:00:00Z\", \"other\": 2}", &tf);
	assert_int_equal(tf.tf_nsecrets, 4);
	check_secret(&tf.tf_secrets[0], "api.openai.com", NULL, "Bearer %s",
	    "sk-key", "PH1");
	assert_null(tf.tf_secrets[0].se_member);
	assert_string_equal(tf.tf_secrets[1].se_host, "auth.openai.com");
	assert_string_equal(tf.tf_secrets[1].se_value, JWT_ID);
	assert_string_equal(tf.tf_secrets[1].se_member, "id_token");
	assert_true(tf.tf_secrets[1].se_jwt);
	ph = tf.tf_secrets[1].se_placeholder;
	assert_int_equal(strlen(ph), strlen(JWT_ID));
	assert_memory_equal(ph, JWT_ID, strlen(JWT_ID) - 12);
	assert_string_not_equal(ph, JWT_ID);
	check_secret(&tf.tf_secrets[2], "chatgpt.com", NULL, "Bearer %s",
	    "acc", "PH3");
	assert_false(tf.tf_secrets[2].se_jwt);
	assert_string_equal(tf.tf_secrets[2].se_member, "access_token");
	check_secret(&tf.tf_secrets[3], "auth.openai.com", NULL, "%s", "ref",
	    "PH4");
	assert_string_equal(tf.tf_secrets[3].se_path, "/oauth/token");
	assert_string_equal(tf.tf_secrets[3].se_member, "refresh_token");
	assert_non_null(strstr(tf.tf_text, "\"OPENAI_API_KEY\": \"PH1\""));
	assert_non_null(strstr(tf.tf_text, ph));
	assert_non_null(strstr(tf.tf_text, "\"access_token\": \"PH3\""));
	assert_non_null(strstr(tf.tf_text, "\"refresh_token\": \"PH4\""));
	assert_non_null(strstr(tf.tf_text, "\"account_id\": \"acct-1\""));
	assert_non_null(strstr(tf.tf_text, "\"last_refresh\": \"2025-01-01"));
	assert_null(strstr(tf.tf_text, "sk-key"));
	assert_null(strstr(tf.tf_text, JWT_ID));
	assert_null(strstr(tf.tf_text, "\"acc\""));
	assert_null(strstr(tf.tf_text, "\"ref\""));
	assert_null(strstr(tf.tf_text, "more"));
	assert_null(strstr(tf.tf_text, "other"));
	assert_int_equal(tf.tf_nleft, 2);
	secrets_clear(&tf);

	/* An API key alone: the login null, as it was. */
	parse(".codex/auth.json",
	    "{\"OPENAI_API_KEY\": \"sk-key\", \"tokens\": null}", &tf);
	assert_int_equal(tf.tf_nsecrets, 1);
	assert_non_null(strstr(tf.tf_text, "\"tokens\": null"));
	assert_int_equal(tf.tf_nleft, 0);
	secrets_clear(&tf);

	/* Not JSON: nothing of it copied. */
	parse(".codex/auth.json", "OPENAI_API_KEY=sk-key", &tf);
	assert_int_equal(tf.tf_nsecrets, 0);
	assert_string_equal(tf.tf_text, "{}\n");
	secrets_clear(&tf);
}

/*
 * A refresh's new tokens written back to Claude Code's login file on
 * the host: those two members and the expiry changed, every other kept,
 * the file replaced whole with its mode.
 */
static void
test_renew(void **state)
{
	static const char *const names[] = { "access_token",
	    "refresh_token" };
	static const char *const values[] = { "new-acc", "new-ref" };
	struct secret_file	 tf;
	struct stat		 st;
	char			 dir[] = "/tmp/test_secrets.XXXXXX", *path;
	char			*text, *cause;
	FILE			*f;
	size_t			 len;

	(void)state;
	assert_non_null(mkdtemp(dir));
	xasprintf(&path, "%s/.credentials.json", dir);
	assert_non_null(f = fopen(path, "w"));
	fputs("{\"claudeAiOauth\": {\"accessToken\": \"acc\", "
	    "\"refreshToken\": \"ref\", \"expiresAt\": 42, "
	    "\"scopes\": [\"user:inference\"]}, \"mcpOAuth\": {\"x\": 1}}\n",
	    f);
	fclose(f);
	assert_int_equal(chmod(path, 0640), 0);
	parse(".claude/.credentials.json", "{}", &tf);
	tf.tf_path = xstrdup(path);
	assert_int_equal(secrets_renew(&tf, names, values, 2, 3600, &cause),
	    0);
	assert_non_null(text = file_read(path, 4096, NULL, &len, &cause));
	assert_non_null(strstr(text, "\"accessToken\": \"new-acc\""));
	assert_non_null(strstr(text, "\"refreshToken\": \"new-ref\""));
	assert_null(strstr(text, "\"expiresAt\": 42,"));
	assert_non_null(strstr(text, "\"user:inference\""));
	assert_non_null(strstr(text, "\"mcpOAuth\""));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	free(text);

	/* A file that lost its login: said, and left as it is. */
	assert_non_null(f = fopen(path, "w"));
	fputs("{\"other\": 1}\n", f);
	fclose(f);
	assert_int_equal(secrets_renew(&tf, names, values, 2, -1, &cause),
	    -1);
	assert_non_null(strstr(cause, "no claudeAiOauth"));
	free(cause);
	assert_non_null(text = file_read(path, 4096, NULL, &len, &cause));
	assert_string_equal(text, "{\"other\": 1}\n");
	free(text);

	/* A folder it cannot write to: said, with the file's name. */
	unlink(path);
	rmdir(dir);
	assert_int_equal(secrets_renew(&tf, names, values, 2, -1, &cause),
	    -1);
	assert_non_null(strstr(cause, path));
	free(cause);
	secrets_clear(&tf);
	free(path);
}

/*
 * Codex's: the three tokens in "tokens", last_refresh now, the account
 * and any other member kept.
 */
static void
test_renew_codex(void **state)
{
	static const char *const names[] = { "id_token", "access_token",
	    "refresh_token" };
	static const char *const values[] = { "new-id", "new-acc",
	    "new-ref" };
	char	*out, *cause;

	(void)state;
	out = tokenjson_codex_renew("{\"tokens\": {\"id_token\": \"i\", "
	    "\"access_token\": \"a\", \"refresh_token\": \"r\", "
	    "\"account_id\": \"acct-1\"}, \"last_refresh\": "
	    "\"2020-01-01T00:00:00Z\", \"x\": 1}", 144, names, values, 3, 3600,
	    &cause);
	assert_non_null(out);
	assert_non_null(strstr(out, "\"id_token\": \"new-id\""));
	assert_non_null(strstr(out, "\"access_token\": \"new-acc\""));
	assert_non_null(strstr(out, "\"refresh_token\": \"new-ref\""));
	assert_non_null(strstr(out, "\"account_id\": \"acct-1\""));
	assert_non_null(strstr(out, "\"x\": 1"));
	assert_null(strstr(out, "2020-"));
	assert_non_null(strstr(out, "\"last_refresh\": \"20"));
	assert_non_null(strstr(out, "Z\""));
	free(out);
	/* An API key alone: no login to renew. */
	assert_null(tokenjson_codex_renew("{\"tokens\": null}", 16, names,
	    values, 3, -1, &cause));
	assert_non_null(strstr(cause, "no ChatGPT login"));
	free(cause);
}

/* Empty files, no final newline, a file of NULs: no crash, no token. */
static void
test_odd(void **state)
{
	struct secret_file	 tf;
	size_t			 i;

	(void)state;
	for (i = 0; i < secrets_nformats; i++) {
		memset(&tf, 0, sizeof(tf));
		secrets_parse(&secrets_formats[i], "", 0, counted, &tf);
		assert_int_equal(tf.tf_nsecrets, 0);
		secrets_clear(&tf);
		memset(&tf, 0, sizeof(tf));
		secrets_parse(&secrets_formats[i], "\0\0\0", 3, counted, &tf);
		assert_int_equal(tf.tf_nsecrets, 0);
		secrets_clear(&tf);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_npmrc),
		cmocka_unit_test(test_npmrc_base64),
		cmocka_unit_test(test_netrc),
		cmocka_unit_test(test_gitcred),
		cmocka_unit_test(test_pypirc),
		cmocka_unit_test(test_cargo),
		cmocka_unit_test(test_agents),
		cmocka_unit_test(test_renew),
		cmocka_unit_test(test_renew_codex),
		cmocka_unit_test(test_odd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
