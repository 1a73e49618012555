// Package folder owns a backup folder's own area, DIR/.quak: where each of
// quak's files lives there, the lock that keeps runs apart, the state
// database, the remembered options, the records of how runs went and the
// health verdict drawn from them. No other package names a file in it.
package folder
