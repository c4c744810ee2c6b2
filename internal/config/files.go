package config

import "fmt"

// Files is where uploaded files are kept (CONTRACT.md §15): in the
// database by default, or in an S3-compatible store.
type Files struct {
	// MaxMB bounds one upload; zero is the default, 200.
	MaxMB     int    `yaml:"max_mb"`
	Store     string `yaml:"store"`
	Endpoint  string `yaml:"endpoint"`
	Bucket    string `yaml:"bucket"`
	AccessKey string `yaml:"access_key"`
	SecretKey string `yaml:"secret_key"`
	Region    string `yaml:"region"`
}

// MaxBytes is MaxMB in bytes, 200 MB when unset.
func (f Files) MaxBytes() int64 {
	if f.MaxMB <= 0 {
		return 200 << 20
	}
	return int64(f.MaxMB) << 20
}

func (f Files) validate() []string {
	var errs []string
	if f.MaxMB < 0 {
		errs = append(errs, "files.max_mb must not be negative")
	}
	switch f.Store {
	case "", "database":
	case "s3":
		if f.Endpoint == "" || f.Bucket == "" {
			errs = append(errs, "files.store s3 needs files.endpoint and files.bucket")
		}
	default:
		errs = append(errs, fmt.Sprintf("files.store must be database or s3, got %q", f.Store))
	}
	return errs
}
