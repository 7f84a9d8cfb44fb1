// Webhook presets: the body each service documents for its incoming webhooks, built from a
// notification (docs/alerts-channels.md shows an example of each).
//
//   slack       {"text": "..."}                     Slack incoming webhooks (mrkdwn; &, <, > escaped)
//   discord     {"content": "...", "allowed_mentions": {"parse": []}}
//                                                   Discord "execute webhook" (content at most
//                                                   2,000 characters; no @everyone pings)
//   mattermost  {"text": "..."}                     Mattermost incoming webhooks (Markdown)
//   teams       {"type": "message", "attachments": [an Adaptive Card]}
//                                                   Microsoft Teams Workflows ("When a Teams webhook
//                                                   request is received"); the retired Office 365
//                                                   connectors' MessageCard is not sent
import type { OutgoingNotification } from '../delivery-port';
import type { ChannelPreset } from '../../../storage/channels';
import { instanceText } from './template';

export const PRESETS: readonly ChannelPreset[] = ['slack', 'discord', 'mattermost', 'teams'];

const cut = (text: string, max: number) =>
  [...text].length <= max ? text : [...text].slice(0, max - 1).join('') + '…';

/** The lines under the title: the message, then the instance's labels when it has any. */
function details(n: OutgoingNotification): string {
  const labels = instanceText(n.instance);
  return labels === '' ? n.message : `${n.message}\n${labels}`;
}

const slackEscape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function presetBody(preset: ChannelPreset, n: OutgoingNotification): unknown {
  switch (preset) {
    case 'slack': {
      const link = n.monitor.url ? `\n<${n.monitor.url}|Open ${slackEscape(n.monitor.name)}>` : '';
      return { text: cut(`*${slackEscape(n.title)}*\n${slackEscape(details(n))}${link}`, 40_000) };
    }
    case 'discord': {
      const link = n.monitor.url ? `\n${n.monitor.url}` : '';
      return { content: cut(`**${n.title}**\n${details(n)}${link}`, 2_000), allowed_mentions: { parse: [] } };
    }
    case 'mattermost': {
      const link = n.monitor.url ? `\n[Open ${n.monitor.name}](${n.monitor.url})` : '';
      return { text: cut(`**${n.title}**\n${details(n)}${link}`, 16_383) };
    }
    case 'teams': {
      const facts = [
        { title: 'State', value: n.state },
        { title: 'Value', value: n.value === null ? 'no data' : String(n.value) },
        { title: 'Condition', value: n.condition },
        { title: 'Since', value: n.since },
      ];
      const labels = instanceText(n.instance);
      if (labels !== '') facts.push({ title: 'Instance', value: labels });
      const card: Record<string, unknown> = {
        $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
        type: 'AdaptiveCard',
        version: '1.4',
        body: [
          { type: 'TextBlock', text: n.title, weight: 'Bolder', size: 'Medium', wrap: true },
          { type: 'TextBlock', text: n.message, wrap: true },
          { type: 'FactSet', facts },
        ],
      };
      if (n.monitor.url)
        card.actions = [{ type: 'Action.OpenUrl', title: 'Open monitor', url: n.monitor.url }];
      return {
        type: 'message',
        attachments: [
          { contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content: card },
        ],
      };
    }
  }
}
