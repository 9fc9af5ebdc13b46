// A new cluster's name: the one given, else asked (with a random default) or random, as CitC makes
// them: two words, e.g. "cheerful-macaw". Checked against CLUSTER_NAME either way.
import {randomInt} from 'node:crypto'

import {CLUSTER_NAME} from '../../cluster-name.js'
import {InvalidInputError} from '../../errors.js'
import type {Prompts} from '../../io.js'

const ADJECTIVES = [
  'amber', 'brave', 'bright', 'calm', 'cheerful', 'clever', 'cosmic', 'eager', 'gentle', 'golden',
  'happy', 'jolly', 'keen', 'lively', 'lucky', 'mellow', 'nimble', 'proud', 'quick', 'quiet',
  'rapid', 'shiny', 'silent', 'smart', 'steady', 'sunny', 'swift', 'tidy', 'vivid', 'witty',
]
const ANIMALS = [
  'badger', 'beaver', 'bison', 'condor', 'coyote', 'falcon', 'ferret', 'gecko', 'heron', 'ibis',
  'jackal', 'koala', 'lemur', 'lynx', 'macaw', 'marten', 'narwhal', 'ocelot', 'otter', 'panda',
  'puffin', 'quokka', 'raven', 'salmon', 'tapir', 'toucan', 'urchin', 'walrus', 'wombat', 'yak',
]

export function randomClusterName(): string {
  return `${ADJECTIVES[randomInt(ADJECTIVES.length)]}-${ANIMALS[randomInt(ANIMALS.length)]}`
}

/** The given name, or the wizard's answer (`prompts` on a terminal), or a random one; `where` names the flag or config line. */
export async function clusterName(given: string | undefined, where: string, prompts?: Prompts): Promise<string> {
  let name = given
  if (!name && prompts) {
    name = await prompts.input({message: 'Cluster name:', default: randomClusterName(), validate: (v) => CLUSTER_NAME.test(v) || 'lowercase letters, digits and -, starting with a letter (≤ 31)'})
  }
  name ??= randomClusterName()
  if (!CLUSTER_NAME.test(name)) {
    throw new InvalidInputError([{where, message: `"${name}" is not a cluster name: lowercase letters, digits and -, starting with a letter, at most 31 characters`}])
  }
  return name
}
