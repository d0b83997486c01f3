/** The events of public signups (part of `MailroomEvents`). */
export interface SignupEvents {
  /** An address signed up through a form (`pending` under double opt-in). */
  contactSubscribed: (event: {
    projectId: string;
    address: string;
    formRef: string;
    pending: boolean;
  }) => void;
  /** A pending signup was confirmed from its link. */
  contactConfirmed: (event: { projectId: string; address: string; formRef: string }) => void;
}
