package apiclient

// KeyAttributes are the account's wrapped keys (docs/protocol.md §3.1).
type KeyAttributes struct {
	KEKSalt                           B64    `json:"kekSalt"`
	EncryptedKey                      B64    `json:"encryptedKey"`
	KeyDecryptionNonce                B64    `json:"keyDecryptionNonce"`
	PublicKey                         B64    `json:"publicKey"`
	EncryptedSecretKey                B64    `json:"encryptedSecretKey"`
	SecretKeyDecryptionNonce          B64    `json:"secretKeyDecryptionNonce"`
	MemLimit                          uint64 `json:"memLimit"`
	OpsLimit                          uint32 `json:"opsLimit"`
	MasterKeyEncryptedWithRecoveryKey B64    `json:"masterKeyEncryptedWithRecoveryKey,omitempty"`
	MasterKeyDecryptionNonce          B64    `json:"masterKeyDecryptionNonce,omitempty"`
	RecoveryKeyEncryptedWithMasterKey B64    `json:"recoveryKeyEncryptedWithMasterKey,omitempty"`
	RecoveryKeyDecryptionNonce        B64    `json:"recoveryKeyDecryptionNonce,omitempty"`
}

// SRPAttributes are what login needs before the password (§2.2).
type SRPAttributes struct {
	SRPUserID         string `json:"srpUserID"`
	SRPSalt           B64    `json:"srpSalt"`
	MemLimit          uint64 `json:"memLimit"`
	OpsLimit          uint32 `json:"opsLimit"`
	KEKSalt           B64    `json:"kekSalt"`
	IsEmailMFAEnabled bool   `json:"isEmailMFAEnabled"`
}

// AuthResponse is museum's answer to a login step (§2.10): either keys and
// a token, or the second factor still needed.
type AuthResponse struct {
	ID                   int64          `json:"id"`
	KeyAttributes        *KeyAttributes `json:"keyAttributes,omitempty"`
	EncryptedToken       B64            `json:"encryptedToken,omitempty"`
	Token                string         `json:"token,omitempty"`
	TwoFactorSessionID   string         `json:"twoFactorSessionID,omitempty"`
	TwoFactorSessionIDV2 string         `json:"twoFactorSessionIDV2,omitempty"`
	PasskeySessionID     string         `json:"passkeySessionID"`
	AccountsURL          string         `json:"accountsUrl"`
	SRPM2                B64            `json:"srpM2,omitempty"`
}

// CollectionUser is a collection's owner or a sharee.
type CollectionUser struct {
	ID    int64  `json:"id"`
	Email string `json:"email,omitempty"`
	Role  string `json:"role,omitempty"`
}

// MagicMetadata is an encrypted mutable metadata envelope.
type MagicMetadata struct {
	Version int `json:"version"`
	Count   int `json:"count"`
	Data    B64 `json:"data"`
	Header  B64 `json:"header"`
}

// Collection is an album as museum lists it (§4.2).
type Collection struct {
	ID                  int64            `json:"id"`
	Owner               CollectionUser   `json:"owner"`
	EncryptedKey        B64              `json:"encryptedKey"`
	KeyDecryptionNonce  B64              `json:"keyDecryptionNonce,omitempty"`
	Name                string           `json:"name,omitempty"`
	EncryptedName       B64              `json:"encryptedName,omitempty"`
	NameDecryptionNonce B64              `json:"nameDecryptionNonce,omitempty"`
	Type                string           `json:"type"`
	Sharees             []CollectionUser `json:"sharees,omitempty"`
	UpdationTime        int64            `json:"updationTime"`
	IsDeleted           bool             `json:"isDeleted"`
	MagicMetadata       *MagicMetadata   `json:"magicMetadata,omitempty"`
	PubMagicMetadata    *MagicMetadata   `json:"pubMagicMetadata,omitempty"`
	SharedMagicMetadata *MagicMetadata   `json:"sharedMagicMetadata,omitempty"`
}

// FileAttributes locate and decrypt one of a file's three parts.
type FileAttributes struct {
	EncryptedData    B64    `json:"encryptedData,omitempty"`
	DecryptionHeader B64    `json:"decryptionHeader"`
	ObjectKey        string `json:"objectKey,omitempty"`
	Size             int64  `json:"size,omitempty"`
}

// FileInfo holds the ciphertext sizes of the file and thumbnail objects.
type FileInfo struct {
	FileSize  int64 `json:"fileSize,omitempty"`
	ThumbSize int64 `json:"thumbSize,omitempty"`
}

// File is one (file, collection) entry of a diff (§5.2).
type File struct {
	ID                 int64          `json:"id"`
	OwnerID            int64          `json:"ownerID"`
	CollectionID       int64          `json:"collectionID"`
	CollectionOwnerID  int64          `json:"collectionOwnerID,omitempty"`
	EncryptedKey       B64            `json:"encryptedKey"`
	KeyDecryptionNonce B64            `json:"keyDecryptionNonce"`
	File               FileAttributes `json:"file"`
	Thumbnail          FileAttributes `json:"thumbnail"`
	Metadata           FileAttributes `json:"metadata"`
	MagicMetadata      *MagicMetadata `json:"magicMetadata,omitempty"`
	PubMagicMetadata   *MagicMetadata `json:"pubMagicMetadata,omitempty"`
	Info               *FileInfo      `json:"info,omitempty"`
	IsDeleted          bool           `json:"isDeleted"`
	UpdationTime       int64          `json:"updationTime"`
}

// DiffPage is one page of a collection's file diff.
type DiffPage struct {
	Diff    []File `json:"diff"`
	HasMore bool   `json:"hasMore"`
}

// TrashItem is one entry of the trash diff.
type TrashItem struct {
	File       File  `json:"file"`
	IsDeleted  bool  `json:"isDeleted"`
	IsRestored bool  `json:"isRestored"`
	DeleteBy   int64 `json:"deleteBy"`
	UpdatedAt  int64 `json:"updatedAt"`
}

// TrashPage is one page of the trash diff.
type TrashPage struct {
	Diff    []TrashItem `json:"diff"`
	HasMore bool        `json:"hasMore"`
}

// UploadURL is a presigned PUT URL and the object key it writes.
type UploadURL struct {
	ObjectKey string `json:"objectKey"`
	URL       string `json:"url"`
}
