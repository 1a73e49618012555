package enteapitest

import (
	"github.com/quak-photos/quak/apiclient/enteapitest/model"
	"github.com/quak-photos/quak/apiclient/enteapitest/wire"
)

// The model's records in museum's JSON.

// fileJSON is an album entry as museum's ente.File.
func fileJSON(e model.Entry) wire.File {
	owner, added := e.CollectionOwnerID, e.AddedAt
	f := wire.File{ID: e.FileID, OwnerID: e.OwnerID, CollectionID: e.CollectionID,
		CollectionOwnerID: &owner, CollectionAddedAt: &added,
		EncryptedKey: b64(e.EncryptedKey), KeyDecryptionNonce: b64(e.KeyDecryptionNonce),
		File:      wire.FileAttributes{DecryptionHeader: b64(e.FileHeader)},
		Thumbnail: wire.FileAttributes{DecryptionHeader: b64(e.ThumbnailHeader)},
		Metadata:  wire.FileAttributes{EncryptedData: b64(e.Metadata), DecryptionHeader: b64(e.MetadataHeader)},
		IsDeleted: e.IsDeleted, UpdationTime: e.UpdationTime,
		MagicMetadata: magicJSON(e.MagicMetadata), PubMagicMetadata: magicJSON(e.PubMagicMetadata),
	}
	if e.Info != nil {
		f.Info = &wire.FileInfo{FileSize: e.Info.FileSize, ThumbSize: e.Info.ThumbSize}
	}
	return f
}

// filesJSON is a page of entries.
func filesJSON(page []model.Entry) []wire.File {
	out := make([]wire.File, 0, len(page))
	for _, e := range page {
		out = append(out, fileJSON(e))
	}
	return out
}

// magicJSON is a magic metadata envelope as museum's.
func magicJSON(m *model.Magic) *wire.MagicMetadata {
	if m == nil {
		return nil
	}
	return &wire.MagicMetadata{Version: m.Version, Count: m.Count, Data: b64(m.Data), Header: b64(m.Header)}
}

// collectionJSON is an album as museum's ente.Collection.
func collectionJSON(c model.CollectionView) wire.Collection {
	out := wire.Collection{ID: c.ID, Owner: userJSON(c.Owner),
		EncryptedKey: b64(c.EncryptedKey), KeyDecryptionNonce: b64(c.KeyDecryptionNonce),
		EncryptedName: b64(c.EncryptedName), NameDecryptionNonce: b64(c.NameDecryptionNonce),
		Type: c.Type, Sharees: []wire.CollectionUser{}, PublicURLs: []wire.PublicURL{},
		UpdationTime: c.UpdationTime, IsDeleted: c.IsDeleted, App: "photos",
		MagicMetadata: magicJSON(c.MagicMetadata), SharedMagicMetadata: magicJSON(c.SharedMagicMetadata)}
	for _, sh := range c.Sharees {
		out.Sharees = append(out.Sharees, userJSON(sh))
	}
	for _, l := range c.Links {
		out.PublicURLs = append(out.PublicURLs, linkJSON(l))
	}
	return out
}

// userJSON is an album's owner or sharee.
func userJSON(p model.Participant) wire.CollectionUser {
	return wire.CollectionUser{ID: p.ID, Email: p.Email, Role: p.Role}
}

// linkJSON is a link's settings as museum's ente.PublicURL: the
// password's salt and limits only with a password.
func linkJSON(l model.LinkSettings) wire.PublicURL {
	out := wire.PublicURL{URL: l.URL, DeviceLimit: l.DeviceLimit, ValidTill: l.ValidTill,
		EnableDownload: l.EnableDownload, EnableCollect: l.EnableCollect, EnableComment: l.EnableComment,
		PasswordEnabled: l.PasswordEnabled, EnableJoin: l.EnableJoin}
	if l.PasswordEnabled {
		nonce, mem, ops := b64(l.Nonce), int64(l.MemLimit), int64(l.OpsLimit)
		out.Nonce, out.MemLimit, out.OpsLimit = &nonce, &mem, &ops
	}
	return out
}

// keysJSON is an account's keys as museum's ente.KeyAttributes.
func keysJSON(k model.KeyAttributes) *wire.KeyAttributes {
	return &wire.KeyAttributes{KEKSalt: b64(k.KEKSalt), EncryptedKey: b64(k.EncryptedKey),
		KeyDecryptionNonce: b64(k.KeyDecryptionNonce), PublicKey: b64(k.PublicKey),
		EncryptedSecretKey: b64(k.EncryptedSecretKey), SecretKeyDecryptionNonce: b64(k.SecretKeyDecryptionNonce),
		MemLimit: int64(k.MemLimit), OpsLimit: int64(k.OpsLimit),
		MasterKeyEncryptedWithRecoveryKey: b64(k.MasterKeyEncryptedWithRecoveryKey),
		MasterKeyDecryptionNonce:          b64(k.MasterKeyDecryptionNonce),
		RecoveryKeyEncryptedWithMasterKey: b64(k.RecoveryKeyEncryptedWithMasterKey),
		RecoveryKeyDecryptionNonce:        b64(k.RecoveryKeyDecryptionNonce)}
}

// authJSON is a login step's answer as museum's
// EmailAuthorizationResponse.
func authJSON(a *model.Auth) wire.EmailAuthorizationResponse {
	out := wire.EmailAuthorizationResponse{ID: a.ID, Token: a.Token, PasskeySessionID: a.PasskeySessionID,
		AccountsURL: a.AccountsURL, TwoFactorSessionID: a.TwoFactorSessionID, TwoFactorSessionIDV2: a.TwoFactorSessionIDV2}
	if a.KeyAttributes != nil {
		out.KeyAttributes, out.EncryptedToken = keysJSON(*a.KeyAttributes), b64(a.EncryptedToken)
	}
	if a.SRPM2 != nil {
		m2 := b64(a.SRPM2)
		out.SRPM2 = &m2
	}
	return out
}

// twoFactorJSON is the answer once a second factor passed, as museum's
// TwoFactorAuthorizationResponse.
func twoFactorJSON(a *model.Auth) wire.TwoFactorAuthorizationResponse {
	out := wire.TwoFactorAuthorizationResponse{ID: a.ID}
	if a.KeyAttributes != nil {
		out.KeyAttributes, out.EncryptedToken = keysJSON(*a.KeyAttributes), b64(a.EncryptedToken)
	}
	return out
}
