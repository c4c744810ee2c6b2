package plugin

import "github.com/turnpike-gw/turnpike/internal/store/sqlstore"

// The plugin tables live in the gateway's database. plugin_runtime holds one
// row whose revision changes with every administrative change, so that every
// node notices and rebuilds the same generation.
func init() {
	sqlstore.Register(sqlstore.Migration{Version: 100, Name: "task plugins", SQL: `
CREATE TABLE plugin_versions (
	id {{id}},
	plugin_key {{string}} NOT NULL,
	version {{string}} NOT NULL,
	source {{text}} NOT NULL,
	sha256 {{string}} NOT NULL,
	icon {{blob}} NULL,
	origin {{string}} NOT NULL,
	origin_url {{text}} NOT NULL,
	uploaded_by {{string}} NOT NULL,
	created_at {{time}} NOT NULL,
	CONSTRAINT plugin_versions_key_version UNIQUE (plugin_key, version)
) {{options}};

CREATE TABLE plugin_state (
	plugin_key {{string}} NOT NULL PRIMARY KEY,
	active_version {{string}} NOT NULL,
	enabled {{int}} NOT NULL,
	held_back {{int}} NOT NULL,
	updated_at {{time}} NOT NULL
) {{options}};

CREATE TABLE plugin_marketplace_sources (
	id {{id}},
	url {{string}} NOT NULL,
	created_at {{time}} NOT NULL,
	CONSTRAINT plugin_marketplace_sources_url UNIQUE (url)
) {{options}};

CREATE TABLE plugin_audit (
	id {{id}},
	actor {{string}} NOT NULL,
	action {{string}} NOT NULL,
	plugin_key {{string}} NOT NULL,
	version {{string}} NOT NULL,
	outcome {{string}} NOT NULL,
	detail {{text}} NOT NULL,
	created_at {{time}} NOT NULL
) {{options}};

CREATE TABLE plugin_runtime (
	id {{int}} NOT NULL PRIMARY KEY,
	revision {{string}} NOT NULL,
	updated_at {{time}} NOT NULL
) {{options}};

INSERT INTO plugin_runtime (id, revision, updated_at) VALUES (1, '0', CURRENT_TIMESTAMP)`})
}
