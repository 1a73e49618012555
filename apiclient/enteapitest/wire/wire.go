// Package wire is museum's JSON as museum's own source declares it
// (server/ente/*.go and the gin.H answers of server/pkg/api, Ente at
// a621d73), field for field and tag for tag, for the fake server to answer
// with. It is written apart from apiclient's types on purpose: a wrong
// JSON tag in the client is then met by museum's tag in a test, not
// mirrored by the fake. Binary fields are strings of standard padded
// base64, as museum keeps them; times are µs.
package wire

// File is ente.File: one (file, album) entry of a diff, the file of GET
// /collections/file, and the answer to POST /files.
type File struct {
	ID                 int64          `json:"id"`
	OwnerID            int64          `json:"ownerID"`
	CollectionID       int64          `json:"collectionID"`
	CollectionOwnerID  *int64         `json:"collectionOwnerID"`
	CollectionAddedAt  *int64         `json:"collectionAddedAt,omitempty"`
	EncryptedKey       string         `json:"encryptedKey"`
	KeyDecryptionNonce string         `json:"keyDecryptionNonce"`
	File               FileAttributes `json:"file"`
	Thumbnail          FileAttributes `json:"thumbnail"`
	Metadata           FileAttributes `json:"metadata"`
	IsDeleted          bool           `json:"isDeleted"`
	UpdationTime       int64          `json:"updationTime"`
	MagicMetadata      *MagicMetadata `json:"magicMetadata,omitempty"`
	PubMagicMetadata   *MagicMetadata `json:"pubMagicMetadata,omitempty"`
	Info               *FileInfo      `json:"info,omitempty"`
	Action             *string        `json:"action,omitempty"`
	ActionUserID       *int64         `json:"actionUser,omitempty"`
}

// FileAttributes is ente.FileAttributes: one of a file's three parts.
// size is always sent, 0 in diffs.
type FileAttributes struct {
	ObjectKey        string `json:"objectKey,omitempty"`
	EncryptedData    string `json:"encryptedData,omitempty"`
	DecryptionHeader string `json:"decryptionHeader"`
	Size             int64  `json:"size"`
}

// MagicMetadata is ente.MagicMetadata.
type MagicMetadata struct {
	Version int    `json:"version,omitempty"`
	Count   int    `json:"count,omitempty"`
	Data    string `json:"data,omitempty"`
	Header  string `json:"header,omitempty"`
}

// FileInfo is ente.FileInfo: the ciphertext sizes of a file's objects.
type FileInfo struct {
	FileSize  int64 `json:"fileSize,omitempty"`
	ThumbSize int64 `json:"thumbSize,omitempty"`
}

// Diff is GET /collections/v2/diff's and /public-collection/diff's
// answer.
type Diff struct {
	Diff    []File `json:"diff"`
	HasMore bool   `json:"hasMore"`
}

// Collection is ente.Collection.
type Collection struct {
	ID                  int64                `json:"id"`
	Owner               CollectionUser       `json:"owner"`
	EncryptedKey        string               `json:"encryptedKey"`
	KeyDecryptionNonce  string               `json:"keyDecryptionNonce,omitempty"`
	Name                string               `json:"name"`
	EncryptedName       string               `json:"encryptedName"`
	NameDecryptionNonce string               `json:"nameDecryptionNonce"`
	Type                string               `json:"type"`
	Attributes          CollectionAttributes `json:"attributes,omitempty"`
	Sharees             []CollectionUser     `json:"sharees"`
	PublicURLs          []PublicURL          `json:"publicURLs"`
	UpdationTime        int64                `json:"updationTime"`
	SharedAt            *int64               `json:"sharedAt,omitempty"`
	IsDeleted           bool                 `json:"isDeleted,omitempty"`
	MagicMetadata       *MagicMetadata       `json:"magicMetadata,omitempty"`
	App                 string               `json:"app"`
	PubMagicMetadata    *MagicMetadata       `json:"pubMagicMetadata,omitempty"`
	SharedMagicMetadata *MagicMetadata       `json:"sharedMagicMetadata,omitempty"`
}

// CollectionUser is ente.CollectionUser: an album's owner or a sharee.
type CollectionUser struct {
	ID    int64  `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
	Role  string `json:"role"`
}

// CollectionAttributes is ente.CollectionAttributes (the mobile apps'
// device folder).
type CollectionAttributes struct {
	EncryptedPath       string `json:"encryptedPath,omitempty"`
	PathDecryptionNonce string `json:"pathDecryptionNonce,omitempty"`
	Version             int    `json:"version"`
}

// PublicURL is ente.PublicURL: a public link's settings.
type PublicURL struct {
	URL             string  `json:"url"`
	DeviceLimit     int     `json:"deviceLimit"`
	ValidTill       int64   `json:"validTill"`
	EnableDownload  bool    `json:"enableDownload"`
	EnableCollect   bool    `json:"enableCollect"`
	EnableComment   bool    `json:"enableComment"`
	PasswordEnabled bool    `json:"passwordEnabled"`
	Nonce           *string `json:"nonce,omitempty"`
	MemLimit        *int64  `json:"memLimit,omitempty"`
	OpsLimit        *int64  `json:"opsLimit,omitempty"`
	EnableJoin      bool    `json:"enableJoin"`
	MinRole         *string `json:"minRole,omitempty"`
}

// Trash is ente.Trash: one entry of GET /trash/v2/diff.
type Trash struct {
	File       File  `json:"file"`
	IsDeleted  bool  `json:"isDeleted"`
	IsRestored bool  `json:"isRestored"`
	DeleteBy   int64 `json:"deleteBy"`
	CreatedAt  int64 `json:"createdAt"`
	UpdatedAt  int64 `json:"updatedAt"`
}

// TrashDiff is GET /trash/v2/diff's answer.
type TrashDiff struct {
	Diff    []Trash `json:"diff"`
	HasMore bool    `json:"hasMore"`
}

// KeyAttributes is ente.KeyAttributes: the account's wrapped keys.
type KeyAttributes struct {
	KEKSalt                           string `json:"kekSalt"`
	KEKHash                           string `json:"kekHash"`
	EncryptedKey                      string `json:"encryptedKey"`
	KeyDecryptionNonce                string `json:"keyDecryptionNonce"`
	PublicKey                         string `json:"publicKey"`
	EncryptedSecretKey                string `json:"encryptedSecretKey"`
	SecretKeyDecryptionNonce          string `json:"secretKeyDecryptionNonce"`
	MemLimit                          int64  `json:"memLimit"`
	OpsLimit                          int64  `json:"opsLimit"`
	MasterKeyEncryptedWithRecoveryKey string `json:"masterKeyEncryptedWithRecoveryKey"`
	MasterKeyDecryptionNonce          string `json:"masterKeyDecryptionNonce"`
	RecoveryKeyEncryptedWithMasterKey string `json:"recoveryKeyEncryptedWithMasterKey"`
	RecoveryKeyDecryptionNonce        string `json:"recoveryKeyDecryptionNonce"`
}

// EmailAuthorizationResponse is museum's answer to SRP's verify-session
// and to verify-email: keys and a token, or the second factor still due.
type EmailAuthorizationResponse struct {
	ID                   int64          `json:"id"`
	KeyAttributes        *KeyAttributes `json:"keyAttributes,omitempty"`
	EncryptedToken       string         `json:"encryptedToken,omitempty"`
	Token                string         `json:"token,omitempty"`
	PasskeySessionID     string         `json:"passkeySessionID"`
	AccountsURL          string         `json:"accountsUrl"`
	TwoFactorSessionID   string         `json:"twoFactorSessionID"`
	TwoFactorSessionIDV2 string         `json:"twoFactorSessionIDV2"`
	SRPM2                *string        `json:"srpM2,omitempty"`
}

// TwoFactorAuthorizationResponse is the answer once a second factor
// passed (TOTP, a passkey's token).
type TwoFactorAuthorizationResponse struct {
	ID             int64          `json:"id"`
	KeyAttributes  *KeyAttributes `json:"keyAttributes,omitempty"`
	EncryptedToken string         `json:"encryptedToken,omitempty"`
}

// SRPAttributes is ente.GetSRPAttributesResponse, sent as {"attributes": …}.
type SRPAttributes struct {
	SRPUserID         string `json:"srpUserID"`
	SRPSalt           string `json:"srpSalt"`
	MemLimit          int    `json:"memLimit"`
	OpsLimit          int    `json:"opsLimit"`
	KEKSalt           string `json:"kekSalt"`
	IsEmailMFAEnabled bool   `json:"isEmailMFAEnabled"`
}

// CreateSRPSessionRequest is the body of POST /users/srp/create-session.
type CreateSRPSessionRequest struct {
	SRPUserID string `json:"srpUserID"`
	SRPA      string `json:"srpA"`
}

// CreateSRPSessionResponse is its answer.
type CreateSRPSessionResponse struct {
	SessionID string `json:"sessionID"`
	SRPB      string `json:"srpB"`
}

// VerifySRPSessionRequest is the body of POST /users/srp/verify-session.
type VerifySRPSessionRequest struct {
	SRPUserID string `json:"srpUserID"`
	SessionID string `json:"sessionID"`
	SRPM1     string `json:"srpM1"`
}

// UploadURL is ente.UploadURL.
type UploadURL struct {
	ObjectKey string `json:"objectKey"`
	URL       string `json:"url"`
}

// MultipartUploadURLs is ente.MultipartUploadURLs.
type MultipartUploadURLs struct {
	ObjectKey   string   `json:"objectKey"`
	PartURLs    []string `json:"partURLs"`
	CompleteURL string   `json:"completeURL"`
}

// CollectionFileItem is ente.CollectionFileItem: a file added to an
// album, its key sealed under the album's.
type CollectionFileItem struct {
	ID                 int64  `json:"id"`
	EncryptedKey       string `json:"encryptedKey"`
	KeyDecryptionNonce string `json:"keyDecryptionNonce"`
}

// FileInfoResponse is ente.FileInfoResponse, one entry of POST
// /files/info's {"filesInfo": […]}.
type FileInfoResponse struct {
	ID       int64    `json:"id"`
	FileInfo FileInfo `json:"fileInfo"`
}

// UserDetails is details.UserDetailsResponse (GET /users/details/v2);
// the fake's accounts are in no family.
type UserDetails struct {
	Email        string       `json:"email,omitempty"`
	Usage        int64        `json:"usage"`
	Subscription Subscription `json:"subscription"`
	StorageBonus int64        `json:"storageBonus"`
	ProfileData  *ProfileData `json:"profileData"`
	BonusData    *BonusData   `json:"bonusData"`
	// FamilyData is left out for an account in no family.
	FamilyData *FamilyMemberResponse `json:"familyData,omitempty"`
}

// FamilyMemberResponse is ente.FamilyMemberResponse: a family's plan and
// its members.
type FamilyMemberResponse struct {
	Members    []FamilyMember `json:"members"`
	Storage    int64          `json:"storage"`
	ExpiryTime int64          `json:"expiryTime"`
	AdminBonus int64          `json:"adminBonus"`
}

// FamilyMember is ente.FamilyMember.
type FamilyMember struct {
	ID           string `json:"id"`
	Email        string `json:"email"`
	Status       string `json:"status"`
	StorageLimit *int64 `json:"storageLimit"`
	Usage        int64  `json:"usage"`
	IsAdmin      bool   `json:"isAdmin"`
}

// Subscription is ente.Subscription.
type Subscription struct {
	ID                    int64          `json:"id"`
	UserID                int64          `json:"userID"`
	ProductID             string         `json:"productID"`
	Storage               int64          `json:"storage"`
	OriginalTransactionID string         `json:"originalTransactionID"`
	ExpiryTime            int64          `json:"expiryTime"`
	PaymentProvider       string         `json:"paymentProvider"`
	Attributes            map[string]any `json:"attributes"`
	Price                 string         `json:"price"`
	Period                string         `json:"period"`
}

// ProfileData is ente.ProfileData.
type ProfileData struct {
	CanDisableEmailMFA bool  `json:"canDisableEmailMFA"`
	IsEmailMFAEnabled  bool  `json:"isEmailMFAEnabled"`
	IsTwoFactorEnabled bool  `json:"isTwoFactorEnabled"`
	PasskeyCount       int64 `json:"passkeyCount"`
}

// BonusData is storagebonus.ActiveStorageBonus.
type BonusData struct {
	StorageBonuses []any `json:"storageBonuses"`
}

// TypedError is museum's typed error body (ente.ApiError).
type TypedError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// MiddlewareError is the body museum's middlewares answer with.
type MiddlewareError struct {
	Error string `json:"error"`
}
