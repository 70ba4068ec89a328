/**
 * The e-mail a webhook subscription's owner receives when its deliveries are given up and it is
 * disabled (WEBHOOK_GIVE_UP_AFTER of failures): which endpoint, since when it failed, the last error,
 * and how to enable it again on the portal (delivery then resumes where it stopped: nothing is lost
 * while the change log keeps it). Laid out like every other e-mail (./mail-layout.ts).
 */
import { formatInstant, knownTimeZone, message, oneLine, subjectName, type Block, type Inline, type MailMessage, type MailRecipient } from './mail-layout.js';

/** What `renderWebhookDisabledMail` needs. */
export interface WebhookDisabledMailInput {
  recipient: MailRecipient;
  subscription: {
    id: string;
    url: string;
    description: string;
    failingSince: Date | null;
    disabledAt: Date;
    /** Why it was disabled, as the portal shows it. */
    reason: string | null;
  };
  /** The portal's address (`…/portal/`). */
  portalUrl: string;
  timeZone?: string;
}

export function renderWebhookDisabledMail(input: WebhookDisabledMailInput): MailMessage {
  const { subscription: sub } = input;
  const timeZone = knownTimeZone(input.timeZone);
  const name = sub.description.trim() ? sub.description : sub.url;
  const facts: [string, Inline[]][] = [
    ['Endpoint', [sub.url]],
    ['Subscription', [sub.id]],
  ];
  if (sub.description.trim()) facts.push(['Description', [oneLine(sub.description)]]);
  if (sub.failingSince) facts.push(['Failing since', [formatInstant(sub.failingSince, timeZone)]]);
  facts.push(['Disabled', [formatInstant(sub.disabledAt, timeZone)]]);
  if (sub.reason) facts.push(['Reason', [oneLine(sub.reason)]]);
  const blocks: Block[] = [
    { paragraph: ['The HRS signal platform could not deliver to your webhook ', { strong: `"${oneLine(name)}"` }, ' and has stopped trying: the subscription is disabled.'] },
    { facts },
    {
      paragraph: [
        'Once the endpoint answers again (2xx within the time allowed), enable the subscription on the portal (',
        { href: input.portalUrl, label: input.portalUrl },
        ', Webhooks). Delivery resumes with the message it stopped at, so no change is lost while the platform keeps its change log.',
      ],
    },
    { paragraph: ['You receive this e-mail because the subscription was made with your account on the HRS portal.'] },
  ];
  return message(`Your HRS webhook "${subjectName(name)}" was disabled`, input.recipient, blocks);
}
