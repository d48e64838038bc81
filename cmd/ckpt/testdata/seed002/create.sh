#!/bin/bash
# Seed 002 (../shared/seeds/002_9307bf5006fdfb9d.txt), "Checkpoint Creation
# (First Time)", steps 1 and 2 as its text writes them (uuidgen, or the
# timestamp the text offers as the alternative when uuidgen is absent).

# Generate unique session ID
SESSION_ID=$(uuidgen 2>/dev/null || date +%s)  # Or use timestamp: $(date +%s)
echo "Session ID: $SESSION_ID"

# Create checkpoint directory if needed
mkdir -p agent_checkpoints

# Create initial checkpoint
cat > agent_checkpoints/secondary_a.json <<EOF
{
  "agent_id": "Secondary-A",
  "agent_type": "secondary",
  "session_id": "$SESSION_ID",
  "feature": "feature_02_team_penalty",
  "stage": "S2.P1",
  "phase": "Research Phase - Starting",
  "last_checkpoint": "$(date -u +"%Y-%m-%dT%H:%M:%SZ")",
  "next_checkpoint_expected": "$(date -u -d "+15 minutes" +"%Y-%m-%dT%H:%M:%SZ")",
  "status": "IN_PROGRESS",
  "can_resume": true,
  "blockers": [],
  "files_modified": [],
  "recovery_instructions": "Just started S2.P1. No work done yet. Start from beginning of S2.P1 Research Phase guide.",
  "current_step": "Reading S2.P1 guide",
  "completed_steps": [
    "Received handoff package",
    "Verified epic path",
    "Created checkpoint file"
  ],
  "next_steps": [
    "Read S2.P1 guide",
    "Phase 0: Discovery Context Review",
    "Phase 1: Targeted Research"
  ],
  "coordination_state": {
    "last_inbox_check": "$(date -u +"%Y-%m-%dT%H:%M:%SZ")",
    "unread_messages": 0,
    "last_epic_readme_update": "$(date -u +"%Y-%m-%dT%H:%M:%SZ")",
    "last_status_update": "$(date -u +"%Y-%m-%dT%H:%M:%SZ")"
  }
}
EOF

echo "Initial checkpoint created"
