package taskhttp

// Close removes the temporary files of a multipart body. Call it when the
// request that decoded the body is finished with its files.
func (b decodedBody) Close() error {
	if b.form == nil {
		return nil
	}
	return b.form.RemoveAll()
}
