// sigv4.ts against AWS's published example and against @smithy/signature-v4 (what @aws-sdk/client-ec2
// signed with, installed as its dependency): the same request, credentials and time give the same
// Authorization header.
import {createHash} from 'node:crypto'

import {SignatureV4} from '@smithy/signature-v4'
import {describe, expect, it} from 'vitest'

import {canonicalRequest, signingKey, signV4} from '../../../../src/lib/providers/aws/sigv4.js'
import {NodeSha256} from '../../../doubles/cloud-api/ec2.js'

describe("AWS's published Signature Version 4 example", () => {
  // The AWS General Reference's worked example ("Examples of the complete Signature Version 4 signing
  // process"): IAM ListUsers by GET, signed by AKIDEXAMPLE on 2015-08-30 12:36:00 UTC in us-east-1.
  const request = {
    method: 'GET',
    url: new URL('https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08'),
    headers: {'content-type': 'application/x-www-form-urlencoded; charset=utf-8'},
    body: '',
  }
  const credentials = {accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'}

  it('gives its canonical request hash, signing key and signature', () => {
    const {text} = canonicalRequest({...request, headers: {...request.headers, host: 'iam.amazonaws.com', 'x-amz-date': '20150830T123600Z'}})
    expect(createHash('sha256').update(text).digest('hex')).toBe('f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59')
    expect(signingKey(credentials.secretAccessKey, '20150830', 'us-east-1', 'iam').toString('hex')).toBe('c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9')
    const signed = signV4(request, {credentials, region: 'us-east-1', service: 'iam', now: new Date('2015-08-30T12:36:00Z'), contentSha256: false})
    expect(signed.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7',
    )
  })
})

describe('the same signature as @smithy/signature-v4', () => {
  const cases = [
    {name: 'an EC2 POST with a session token', url: 'http://127.0.0.1:39707/', session: 'fake-imds-session-token', body: 'Action=DescribeInstances&Version=2016-11-15&Filter.1.Name=tag%3Acluster&Filter.1.Value.1=demo&MaxResults=1000'},
    {name: 'with static keys at the default HTTPS port', url: 'https://ec2.eu-west-2.amazonaws.com/', session: undefined, body: 'Action=TerminateInstances&Version=2016-11-15&InstanceId.1=i-0123'},
    {name: 'a body with spaces, UTF-8 and reserved characters', url: 'https://ec2.eu-west-2.amazonaws.com/', session: 'tok/+=', body: 'Action=RunInstances&Version=2016-11-15&TagSpecification.1.Tag.1.Value=%C3%A9t%C3%A9%20%21%2A%28%29'},
  ]
  it.each(cases)('$name', async ({url, session, body}) => {
    const credentials = {accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', ...(session ? {sessionToken: session} : {})}
    const now = new Date('2026-11-26T22:04:59Z')
    const u = new URL(url)
    const headers = {
      'content-type': 'application/x-www-form-urlencoded',
      'content-length': String(Buffer.byteLength(body)),
      'x-amz-user-agent': 'citc',
      'amz-sdk-invocation-id': '7f16231b-ea9c-40b9-92dc-1de2e5be0716',
      'amz-sdk-request': 'attempt=1; max=1',
    }
    const ours = signV4({method: 'POST', url: u, headers, body}, {credentials, region: 'eu-west-2', service: 'ec2', now})
    const smithy = new SignatureV4({credentials, region: 'eu-west-2', service: 'ec2', sha256: NodeSha256})
    const theirs = await smithy.sign(
      {method: 'POST', protocol: u.protocol, hostname: u.hostname, ...(u.port ? {port: Number(u.port)} : {}), path: u.pathname, query: {}, headers: {...headers, host: u.host}, body},
      {signingDate: now},
    )
    expect(ours.authorization).toBe(theirs.headers.authorization)
    expect(ours['x-amz-content-sha256']).toBe(theirs.headers['x-amz-content-sha256'])
    expect(ours['x-amz-security-token']).toBe(theirs.headers['x-amz-security-token'])
  })
})
