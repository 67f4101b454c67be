package server

// EventListening is the "event" of the JSON line the server prints once it
// is bound and serving: the runners wait for it (lib/constants.sh has it as
// CSB_SERVER_EVENT_LISTENING).
const EventListening = "listening"
