// The channels' pure parts: body templates, presets, durations, header encoding, the retry classes
// of answers, masking, and the `[smtp]` configuration's checks.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import type { OutgoingNotification } from '../../src/domain/alerts/delivery-port';
import {
  DEFAULT_TEMPLATE,
  humanDuration,
  renderTemplate,
  unknownFields,
} from '../../src/domain/alerts/channels/template';
import { presetBody } from '../../src/domain/alerts/channels/presets';
import { statusResult } from '../../src/domain/alerts/channels/outbound-http';
import { cutBytes, headerText, joinUrl } from '../../src/domain/alerts/channels/sender';
import { maskSecret, urlProblem } from '../../src/domain/alerts/channels/fields';
import { smtpFailure } from '../../src/domain/alerts/channels/email';

const n: OutgoingNotification = {
  idempotencyKey: 'k-1',
  kind: 'resolved',
  monitor: { id: 'm1', name: 'Disk <root> & co', url: 'https://m.example/monitors/m1' },
  instance: { host: 'pve1', disk: 'sda' },
  state: 'ok',
  previousState: 'firing',
  value: 41,
  condition: 'above 90',
  since: '2026-11-27T10:00:00Z',
  durationMs: 90_061_000,
  title: 'Disk <root> & co resolved',
  message: 'Disk is 41 again',
};

describe('body templates', () => {
  test('whole placeholders keep their JSON type; embedded ones become text', () => {
    assert.deepEqual(
      renderTemplate(
        {
          a: '{{value}}',
          b: 'at {{ value }}',
          c: '{{instance}}',
          d: 'on {{instance}}',
          e: '{{instance.host}}',
          f: '{{instance.nope}}',
          g: 'x{{instance.nope}}y',
          h: [1, true, null, '{{monitor.url}}'],
          '{{kind}}': 'keys are not templates',
        },
        n,
      ),
      {
        a: 41,
        b: 'at 41',
        c: { host: 'pve1', disk: 'sda' },
        d: 'on disk=sda, host=pve1',
        e: 'pve1',
        f: null,
        g: 'xy',
        h: [1, true, null, 'https://m.example/monitors/m1'],
        '{{kind}}': 'keys are not templates',
      },
    );
    assert.equal(renderTemplate('{{duration}}', n), '1 d 1 h');
    assert.equal(renderTemplate('{{value}}', { ...n, value: null }), null);
  });

  test('the default body names every field', () => {
    const body = renderTemplate(DEFAULT_TEMPLATE, n) as Record<string, unknown>;
    assert.equal(body.previous_state, 'firing');
    assert.deepEqual(body.monitor, {
      id: 'm1',
      name: 'Disk <root> & co',
      url: 'https://m.example/monitors/m1',
    });
    assert.deepEqual(unknownFields(DEFAULT_TEMPLATE), []);
  });

  test('unknown names are found wherever they are', () => {
    assert.deepEqual(
      unknownFields({ a: ['{{x}}', { b: 'y {{monitor.nme}}' }], c: '{{instance.any_label}}' }),
      ['x', 'monitor.nme'],
    );
  });

  test('durations: the two largest units', () => {
    assert.equal(humanDuration(0), '0 s');
    assert.equal(humanDuration(45_000), '45 s');
    assert.equal(humanDuration(7_800_000), '2 h 10 m');
    assert.equal(humanDuration(3 * 86_400_000 + 4 * 3_600_000 + 5_000), '3 d 4 h');
  });
});

describe('presets', () => {
  test('slack escapes &, <, > and links the monitor', () => {
    const body = presetBody('slack', n) as { text: string };
    assert.equal(
      body.text,
      '*Disk &lt;root&gt; &amp; co resolved*\nDisk is 41 again\ndisk=sda, host=pve1\n<https://m.example/monitors/m1|Open Disk &lt;root&gt; &amp; co>',
    );
  });

  test('discord cuts content to 2,000 characters and pings nobody', () => {
    const body = presetBody('discord', { ...n, message: 'x'.repeat(5000) }) as {
      content: string;
      allowed_mentions: unknown;
    };
    assert.equal([...body.content].length, 2000);
    assert.ok(body.content.endsWith('…'));
    assert.deepEqual(body.allowed_mentions, { parse: [] });
  });

  test('teams: an Adaptive Card in a message attachment, with the facts and a link', () => {
    const body = presetBody('teams', n) as any;
    assert.equal(body.type, 'message');
    const card = body.attachments[0].content;
    assert.equal(card.version, '1.4');
    assert.deepEqual(card.body[2].facts.at(-1), { title: 'Instance', value: 'disk=sda, host=pve1' });
    assert.deepEqual(card.actions, [
      { type: 'Action.OpenUrl', title: 'Open monitor', url: 'https://m.example/monitors/m1' },
    ]);
  });
});

describe('requests', () => {
  test('header text: ASCII as is, otherwise RFC 2047; no line breaks', () => {
    assert.equal(headerText('CPU high'), 'CPU high');
    assert.equal(headerText('a\r\nInjected: 1'), 'a Injected: 1');
    assert.equal(
      headerText('Teplota 30 °C'),
      `=?UTF-8?B?${Buffer.from('Teplota 30 °C').toString('base64')}?=`,
    );
  });

  test('server URLs keep their path prefix', () => {
    assert.equal(joinUrl('https://push.example.com/', 'message'), 'https://push.example.com/message');
    assert.equal(joinUrl('https://h.example/ntfy//', 'topic'), 'https://h.example/ntfy/topic');
  });

  test('ntfy messages are cut to 4,096 bytes on a character boundary', () => {
    const cut = cutBytes('ž'.repeat(3000), 4096);
    assert.ok(Buffer.byteLength(cut) <= 4096);
    assert.ok(cut.endsWith('…'));
    assert.equal(cutBytes('short', 4096), 'short');
  });

  test('answers: 2xx delivered; 408, 429, 5xx retried; 3xx and other 4xx permanent', () => {
    assert.deepEqual(statusResult(204, ''), { ok: true, retryable: false, status: 204 });
    for (const status of [408, 429, 500, 503]) assert.equal(statusResult(status, '').retryable, true);
    for (const status of [301, 400, 401, 403, 404, 410, 413])
      assert.equal(statusResult(status, '').retryable, false);
    assert.equal(
      statusResult(400, `  bad\n\n  payload ${'x'.repeat(1000)}`).error!.length,
      'the receiver answered 400: '.length + 200,
    );
  });

  test('SMTP: 4xx retried, 5xx and failed authentication not', () => {
    const signal = new AbortController().signal;
    assert.equal(smtpFailure({ responseCode: 451, response: '451 try later' }, signal).retryable, true);
    assert.deepEqual(smtpFailure({ responseCode: 550, response: '550 No such user\r\nmore' }, signal), {
      ok: false,
      retryable: false,
      status: 550,
      error: 'the SMTP server answered 550 No such user',
    });
    assert.equal(smtpFailure({ code: 'EAUTH' }, signal).retryable, false);
    assert.equal(smtpFailure({ code: 'ECONNECTION' }, signal).retryable, true);
  });

  test('secrets show their last four characters, short ones nothing', () => {
    assert.equal(maskSecret('https://hooks.slack.com/services/T/B/abcdWXYZ'), '…WXYZ');
    assert.equal(maskSecret('12345678'), '…');
  });

  test('target URLs: http(s), a host, no credentials', () => {
    assert.equal(urlProblem('https://example.com/hook'), null);
    assert.equal(urlProblem('http://[::1]:8080/x'), null);
    assert.match(urlProblem('ftp://example.com/')!, /http/);
    assert.match(urlProblem('https://user:pw@example.com/')!, /user name or password/);
    assert.notEqual(urlProblem('http://[fe80::1%25eth0]/'), null, 'no IPv6 zone ids');
    assert.match(urlProblem('not a url')!, /http/);
  });
});

describe('[smtp] configuration', () => {
  const cwd = () => mkdtempSync(path.join(os.tmpdir(), 'svc-smtp-'));
  const load = (env: Record<string, string>) => loadConfig({ env, cwd: cwd() });
  const fails = (env: Record<string, string>, pattern: RegExp) =>
    assert.throws(
      () => load(env),
      (err: unknown) => err instanceof ConfigError && pattern.test(err.message),
    );

  test('a full section loads; From may carry a display name', () => {
    const config = load({
      SERVICE_SMTP_HOST: 'smtp.example.com',
      SERVICE_SMTP_PORT: '465',
      SERVICE_SMTP_TLS: 'tls',
      SERVICE_SMTP_USERNAME: 'u',
      SERVICE_SMTP_PASSWORD: 'p',
      SERVICE_SMTP_FROM: 'Alerts <alerts@example.com>',
    });
    assert.deepEqual(config.smtp, {
      host: 'smtp.example.com',
      port: 465,
      tls: 'tls',
      username: 'u',
      password: 'p',
      from: 'Alerts <alerts@example.com>',
    });
  });

  test('a host needs a From address; a user name needs a password; port 0 is no port', () => {
    fails({ SERVICE_SMTP_HOST: 'smtp.example.com' }, /smtp\.from.*SERVICE_SMTP_FROM/);
    fails(
      { SERVICE_SMTP_HOST: 'smtp.example.com', SERVICE_SMTP_FROM: 'a@b.c', SERVICE_SMTP_USERNAME: 'u' },
      /set both/,
    );
    fails(
      { SERVICE_SMTP_HOST: 'smtp.example.com', SERVICE_SMTP_FROM: 'a@b.c', SERVICE_SMTP_PORT: '0' },
      /smtp\.port/,
    );
    fails({ SERVICE_SMTP_HOST: 'smtp.example.com', SERVICE_SMTP_FROM: 'Alerts <nope>' }, /smtp\.from/);
    fails(
      { SERVICE_SMTP_HOST: 'smtp.example.com', SERVICE_SMTP_FROM: 'a@b.c', SERVICE_SMTP_TLS: 'true' },
      /smtp\.tls/,
    );
  });
});
