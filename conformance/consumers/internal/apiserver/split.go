package apiserver

import (
	"bufio"
	"bytes"
	"io"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// splitDocuments is kubectl's document split (k8s.io/cli-runtime resource.visitor → util/yaml YAMLReader).
func splitDocuments(data []byte) [][]byte {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out [][]byte
	for {
		doc, err := r.Read()
		if err == io.EOF {
			return out
		}
		if err != nil {
			return append(out, data)
		}
		out = append(out, doc)
	}
}
