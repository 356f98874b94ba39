package extract

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/md5"
	"crypto/rc4"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"hash"
)

// pdfPad is the password padding of the standard security handler.
var pdfPad = []byte{
	0x28, 0xBF, 0x4E, 0x5E, 0x4E, 0x75, 0x8A, 0x41, 0x64, 0x00, 0x4E, 0x56, 0xFF, 0xFA, 0x01, 0x08,
	0x2E, 0x2E, 0x00, 0xB6, 0xD0, 0x68, 0x3E, 0x80, 0x2F, 0x0C, 0xA9, 0xFE, 0x64, 0x53, 0x69, 0x7A,
}

// Crypt methods.
const (
	cryptNone = iota
	cryptRC4
	cryptAESV2
	cryptAESV3
)

// pdfCrypt decrypts a PDF protected by the standard security handler with
// an empty user password (owner-password-only files, which any reader
// opens). Anything else is ErrEncrypted.
type pdfCrypt struct {
	key     []byte
	stm     int
	str     int
	rev     int
	encMeta bool
}

// newPDFCrypt authenticates the empty user password.
func newPDFCrypt(d *pdfDoc, enc pdfDict, id0 []byte) (*pdfCrypt, error) {
	if f := d.name(enc["Filter"]); f != "Standard" {
		return nil, fmt.Errorf("%w: security handler %q", ErrEncrypted, f)
	}
	v, _ := pdfInt(d.resolve(enc["V"]))
	r, _ := pdfInt(d.resolve(enc["R"]))
	o := []byte(d.str(enc["O"]))
	u := []byte(d.str(enc["U"]))
	p, _ := pdfInt(d.resolve(enc["P"]))
	c := &pdfCrypt{rev: int(r), encMeta: true}
	if b, ok := d.resolve(enc["EncryptMetadata"]).(bool); ok {
		c.encMeta = b
	}
	length := int64(40)
	if l, ok := pdfInt(d.resolve(enc["Length"])); ok && l >= 40 && l <= 256 {
		length = l
	}
	method := cryptRC4
	switch v {
	case 1, 2:
	case 4, 5:
		cf := d.dict(enc["CF"])
		methodOf := func(name pdfName) int {
			if name == "Identity" || name == "" {
				return cryptNone
			}
			sub := d.dict(cf[name])
			switch d.name(sub["CFM"]) {
			case "AESV2":
				return cryptAESV2
			case "AESV3":
				return cryptAESV3
			case "None":
				return cryptNone
			}
			switch l, _ := pdfInt(d.resolve(sub["Length"])); {
			case l >= 5 && l <= 16: // bytes, as most writers do
				length = l * 8
			case l >= 40 && l <= 128:
				length = l
			}
			return cryptRC4
		}
		c.stm = methodOf(d.name(enc["StmF"]))
		c.str = methodOf(d.name(enc["StrF"]))
		method = -1
	default:
		return nil, fmt.Errorf("%w: unsupported encryption V %d", ErrEncrypted, v)
	}
	if method >= 0 {
		c.stm, c.str = method, method
	}
	switch {
	case r >= 5:
		if len(u) < 48 {
			return nil, fmt.Errorf("%w: bad U entry", ErrEncrypted)
		}
		if !bytes.Equal(hashR6(nil, u[32:40], nil, int(r)), u[:32]) {
			return nil, fmt.Errorf("%w: a user password is required", ErrEncrypted)
		}
		ue := []byte(d.str(enc["UE"]))
		if len(ue) < 32 {
			return nil, fmt.Errorf("%w: bad UE entry", ErrEncrypted)
		}
		k := hashR6(nil, u[40:48], nil, int(r))
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrEncrypted, err)
		}
		c.key = make([]byte, 32)
		cipher.NewCBCDecrypter(block, make([]byte, 16)).CryptBlocks(c.key, ue[:32])
	case r >= 2:
		n := int(length / 8)
		if r == 2 {
			n = 5
		}
		if len(o) < 32 || len(u) < 16 {
			return nil, fmt.Errorf("%w: bad O/U entries", ErrEncrypted)
		}
		h := md5.New()
		h.Write(pdfPad)
		h.Write(o[:32])
		h.Write([]byte{byte(p), byte(p >> 8), byte(p >> 16), byte(p >> 24)})
		h.Write(id0)
		if r >= 4 && !c.encMeta {
			h.Write([]byte{0xFF, 0xFF, 0xFF, 0xFF})
		}
		key := h.Sum(nil)
		if r >= 3 {
			for range 50 {
				sum := md5.Sum(key[:n])
				key = sum[:]
			}
		}
		key = key[:n]
		if !bytes.Equal(pdfUserKey(key, id0, int(r))[:16], u[:16]) {
			return nil, fmt.Errorf("%w: a user password is required", ErrEncrypted)
		}
		c.key = key
	default:
		return nil, fmt.Errorf("%w: unsupported encryption R %d", ErrEncrypted, r)
	}
	return c, nil
}

// pdfUserKey computes the U entry for a file key (algorithms 4 and 5).
func pdfUserKey(key, id0 []byte, rev int) []byte {
	if rev == 2 {
		out := make([]byte, 32)
		c, _ := rc4.NewCipher(key)
		c.XORKeyStream(out, pdfPad)
		return out
	}
	h := md5.New()
	h.Write(pdfPad)
	h.Write(id0)
	x := h.Sum(nil)
	k := make([]byte, len(key))
	for i := range 20 {
		for j := range key {
			k[j] = key[j] ^ byte(i)
		}
		c, _ := rc4.NewCipher(k)
		c.XORKeyStream(x, x)
	}
	return append(x, make([]byte, 16)...)
}

// hashR6 is the password hash of revisions 5 (SHA-256) and 6 (algorithm
// 2.B).
func hashR6(pw, salt, udata []byte, rev int) []byte {
	h := sha256.New()
	h.Write(pw)
	h.Write(salt)
	h.Write(udata)
	k := h.Sum(nil)
	if rev < 6 {
		return k
	}
	for i := 0; ; i++ {
		k1 := make([]byte, 0, 64*(len(pw)+len(k)+len(udata)))
		for range 64 {
			k1 = append(k1, pw...)
			k1 = append(k1, k...)
			k1 = append(k1, udata...)
		}
		block, _ := aes.NewCipher(k[:16])
		e := make([]byte, len(k1))
		cipher.NewCBCEncrypter(block, k[16:32]).CryptBlocks(e, k1)
		sum := 0
		for _, b := range e[:16] {
			sum += int(b)
		}
		var hh hash.Hash
		switch sum % 3 {
		case 0:
			hh = sha256.New()
		case 1:
			hh = sha512.New384()
		default:
			hh = sha512.New()
		}
		hh.Write(e)
		k = hh.Sum(nil)
		if i >= 63 && int(e[len(e)-1]) <= i-31 {
			break
		}
	}
	return k[:32]
}

// objectKey derives the key of one object (algorithm 1).
func (c *pdfCrypt) objectKey(ref pdfRef, method int) []byte {
	if method == cryptAESV3 {
		return c.key
	}
	h := md5.New()
	h.Write(c.key)
	h.Write([]byte{byte(ref.num), byte(ref.num >> 8), byte(ref.num >> 16), byte(ref.gen), byte(ref.gen >> 8)})
	if method == cryptAESV2 {
		h.Write([]byte("sAlT"))
	}
	return h.Sum(nil)[:min(len(c.key)+5, 16)]
}

func (c *pdfCrypt) decrypt(data []byte, ref pdfRef, method int) []byte {
	switch method {
	case cryptRC4:
		out := make([]byte, len(data))
		r, err := rc4.NewCipher(c.objectKey(ref, method))
		if err != nil {
			return data
		}
		r.XORKeyStream(out, data)
		return out
	case cryptAESV2, cryptAESV3:
		if len(data) < 32 || len(data)%16 != 0 {
			return nil
		}
		block, err := aes.NewCipher(c.objectKey(ref, method))
		if err != nil {
			return nil
		}
		out := make([]byte, len(data)-16)
		cipher.NewCBCDecrypter(block, data[:16]).CryptBlocks(out, data[16:])
		if n := int(out[len(out)-1]); n >= 1 && n <= 16 {
			out = out[:len(out)-n]
		}
		return out
	}
	return data
}

func (c *pdfCrypt) decryptStream(data []byte, ref pdfRef, dict pdfDict) []byte {
	if !c.encMeta && dict["Type"] == pdfName("Metadata") {
		return data
	}
	return c.decrypt(data, ref, c.stm)
}

// decryptStrings decrypts every string in v, an object of ref.
func (c *pdfCrypt) decryptStrings(v any, ref pdfRef) any {
	switch v := v.(type) {
	case pdfString:
		return pdfString(c.decrypt([]byte(v), ref, c.str))
	case pdfArray:
		for i := range v {
			v[i] = c.decryptStrings(v[i], ref)
		}
	case pdfDict:
		for k, x := range v {
			v[k] = c.decryptStrings(x, ref)
		}
	}
	return v
}
