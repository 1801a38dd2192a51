package domain

// ProcessedBy says what settled a payment or paid a withdrawal (a receipt's processedBy).
type ProcessedBy string

// The values the API documents; this service writes ProcessedByCron (its background workers:
// the chain watcher, the payout manager), ProcessedByFrontend (a payment whose checkout page
// reported the completing transaction, read from the chain on that report) and
// ProcessedByManual (an operator's settle command).
const (
	ProcessedByWebhook      ProcessedBy = "webhook"
	ProcessedByFrontend     ProcessedBy = "frontend"
	ProcessedByCron         ProcessedBy = "cron"
	ProcessedByManual       ProcessedBy = "manual"
	ProcessedByShoutWebhook ProcessedBy = "shout_webhook"
)
