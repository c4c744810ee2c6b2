package config

import "errors"

// Logs is what becomes of old usage rows (CONTRACT §20): rows older than
// RetentionDays are archived to Archive.S3 and only then deleted. Without
// an archive nothing is deleted, whatever the retention says.
type Logs struct {
	// RetentionDays is how many days rows stay in the database (0: for
	// ever).
	RetentionDays int         `yaml:"retention_days"`
	Archive       LogsArchive `yaml:"archive"`
}

// LogsArchive is where archived rows (and content logs) go.
type LogsArchive struct {
	S3 S3Bucket `yaml:"s3"`
}

// S3Bucket is a bucket of an S3-compatible store and a prefix in it.
type S3Bucket struct {
	Endpoint        string `yaml:"endpoint"`
	Region          string `yaml:"region"`
	Bucket          string `yaml:"bucket"`
	Prefix          string `yaml:"prefix"`
	AccessKeyID     string `yaml:"access_key_id"`
	SecretAccessKey string `yaml:"secret_access_key"`
}

// Set reports whether a bucket is configured.
func (b S3Bucket) Set() bool { return b.Bucket != "" }

// Retention is the retention in days, logs.retention_days or the older
// log_retention_days when only that is set.
func (c Config) Retention() int {
	if c.Logs.RetentionDays > 0 {
		return c.Logs.RetentionDays
	}
	return c.LogRetentionDays
}

func (l Logs) validate() []string {
	var errs []string
	if l.RetentionDays < 0 {
		errs = append(errs, "logs.retention_days must not be negative")
	}
	b := l.Archive.S3
	if (b.Endpoint != "" || b.Prefix != "" || b.AccessKeyID != "") && !b.Set() {
		errs = append(errs, "logs.archive.s3 needs a bucket")
	}
	if b.Set() && (b.AccessKeyID == "") != (b.SecretAccessKey == "") {
		errs = append(errs, errors.New("logs.archive.s3 needs both access_key_id and secret_access_key, or neither").Error())
	}
	return errs
}
