// Cluster names as CitC makes them: two random words, e.g. "cheerful-macaw".
import {randomInt} from 'node:crypto'

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
