/** The internal job class that moves a workflow from one stage to the next (registered by every worker). */
export const WORKFLOW_STEP = "TsqWorkflowStep";
