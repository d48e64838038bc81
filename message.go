package ckpt

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Messages told to the agent working on a checkpoint (`ckpt tell`). A
// message is text that ends up in a model's context, so the fold bounds it
// and names its sender from the event's actor, which a server sets from
// the token for agent-bound tokens: the data cannot claim a sender.
const (
	EventTold      EventType = "told"      // Tell
	EventDelivered EventType = "delivered" // Delivery
)

// MaxMessageBytes bounds one message's text; MaxPendingMessages bounds how
// many wait undelivered on one checkpoint.
const (
	MaxMessageBytes    = 4096
	MaxPendingMessages = 20
)

// Tell is the payload of a told event: one message for the agent. The
// sender is the event's actor.
type Tell struct {
	Text string `json:"text"`
}

// Delivery is the payload of a delivered event: the pending messages IDs
// reached the agent's context through Via (e.g. "claude-code Stop") in
// client session Session. Each ID must be pending: a message is delivered
// once.
type Delivery struct {
	IDs     []string `json:"ids"`
	Via     string   `json:"via,omitempty"`
	Session string   `json:"session,omitempty"`
}

// Message is a message told and not yet delivered. ID is "m" and the
// revision of its told event, so it is unique within the checkpoint.
type Message struct {
	ID   string    `json:"id"`
	From string    `json:"from"`
	At   time.Time `json:"at"`
	Text string    `json:"text"`
}

// UnknownSender is a message's From when its event named no actor.
const UnknownSender = "an unnamed sender"

// quietEvent reports the events that do not count as the agent's work:
// their time is not the checkpoint's UpdatedAt, so telling a silent agent
// something never makes it look alive.
func quietEvent(t EventType) bool { return t == EventTold || t == EventDelivered }

func applyTold(c *Checkpoint, e Event, t Tell, at time.Time) error {
	text := strings.TrimSpace(t.Text)
	switch {
	case text == "":
		return fmt.Errorf("%w: a message needs its text", ErrInvalid)
	case len(t.Text) > MaxMessageBytes:
		return fmt.Errorf("%w: the message is %d bytes; the limit is %d: shorten it or point to a file", ErrInvalid, len(t.Text), MaxMessageBytes)
	case len(c.Messages) >= MaxPendingMessages:
		return fmt.Errorf("%w: %s already has %d undelivered messages, the most that may wait: wait until its agent reads them (ckpt show %s)", ErrInvalid, c.ID, len(c.Messages), c.ID)
	}
	from := strings.TrimSpace(e.Actor.Agent)
	if from == "" {
		from = UnknownSender
	}
	c.Messages = append(c.Messages, Message{ID: "m" + strconv.FormatInt(e.Seq, 10), From: from, At: at, Text: t.Text})
	return nil
}

func applyDelivered(c *Checkpoint, d Delivery) error {
	if len(d.IDs) == 0 {
		return fmt.Errorf("%w: a delivery names the messages delivered", ErrInvalid)
	}
	for i, id := range d.IDs {
		if slices.Contains(d.IDs[:i], id) {
			return fmt.Errorf("%w: message %s is named twice in one delivery", ErrInvalid, id)
		}
		if !slices.ContainsFunc(c.Messages, func(m Message) bool { return m.ID == id }) {
			return fmt.Errorf("%w: message %s of %s is not pending: it was delivered already or never told", ErrConflict, id, c.ID)
		}
	}
	c.Messages = slices.DeleteFunc(c.Messages, func(m Message) bool { return slices.Contains(d.IDs, m.ID) })
	if len(c.Messages) == 0 {
		c.Messages = nil
	}
	return nil
}
