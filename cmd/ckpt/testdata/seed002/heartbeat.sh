#!/bin/bash
# Seed 002 (../shared/seeds/002_9307bf5006fdfb9d.txt): one heartbeat done as
# its text says: "Backup before updating" (backup_checkpoint, from "Checkpoint
# Backup Strategy"), then "Checkpoint Update Protocol" steps 1-3 (read, heredoc
# rewrite with jq reads, jq verify), copied verbatim.

# Before updating checkpoint, create backup
backup_checkpoint() {
  local CHECKPOINT_FILE=$1
  local BACKUP_DIR="agent_checkpoints/backups"

  mkdir -p "$BACKUP_DIR"

  # Create timestamped backup
  local TIMESTAMP=$(date +%Y%m%d_%H%M%S)
  cp "$CHECKPOINT_FILE" "$BACKUP_DIR/$(basename $CHECKPOINT_FILE .json)_$TIMESTAMP.json"

  # Keep only last 10 backups
  ls -t "$BACKUP_DIR"/$(basename $CHECKPOINT_FILE .json)_*.json | tail -n +11 | xargs rm -f
}

# Usage:
backup_checkpoint "agent_checkpoints/secondary_a.json"
# Now safe to update checkpoint

# Step 1: Read Current Checkpoint
# Read existing checkpoint
CHECKPOINT_FILE="agent_checkpoints/secondary_a.json"
CURRENT_CHECKPOINT=$(cat "$CHECKPOINT_FILE")

# Step 2: Update Fields
# Update checkpoint with current state
cat > "$CHECKPOINT_FILE" <<EOF
{
  "agent_id": "Secondary-A",
  "agent_type": "secondary",
  "session_id": "$(echo $CURRENT_CHECKPOINT | jq -r '.session_id')",
  "feature": "feature_02_team_penalty",
  "stage": "S2.P2",
  "phase": "Specification - In Progress",
  "last_checkpoint": "$(date -u +"%Y-%m-%dT%H:%M:%SZ")",
  "next_checkpoint_expected": "$(date -u -d "+15 minutes" +"%Y-%m-%dT%H:%M:%SZ")",
  "status": "IN_PROGRESS",
  "can_resume": true,
  "blockers": [],
  "files_modified": [
    "feature_02_team_penalty/spec.md",
    "feature_02_team_penalty/checklist.md"
  ],
  "recovery_instructions": "Resume from S2.P2 Specification Phase. spec.md is 80% complete. Complete Acceptance Criteria section, then move to checklist.md.",
  "current_step": "Writing Acceptance Criteria in spec.md",
  "completed_steps": [
    "S2.P1 complete (Research Phase)",
    "S2.P2 Phase 1: Requirements section written",
    "S2.P2 Phase 2: Integration section written"
  ],
  "next_steps": [
    "Complete Acceptance Criteria",
    "Write checklist.md questions",
    "Transition to S2.P3"
  ],
  "coordination_state": {
    "last_inbox_check": "$(date -u +"%Y-%m-%dT%H:%M:%SZ")",
    "unread_messages": 0,
    "last_epic_readme_update": "$(date -u -d "-15 minutes" +"%Y-%m-%dT%H:%M:%SZ")",
    "last_status_update": "$(date -u -d "-15 minutes" +"%Y-%m-%dT%H:%M:%SZ")"
  }
}
EOF

echo "Checkpoint updated"

# Step 3: Verify Update
# Verify checkpoint file valid JSON
if jq '.' "$CHECKPOINT_FILE" >/dev/null 2>&1; then
  echo "Checkpoint valid"
else
  echo "ERROR: Checkpoint corrupted during update"
  # Restore from backup if exists
fi
