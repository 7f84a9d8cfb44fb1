import type { Context } from 'koa';
import { AppError } from '../../errors';
import type { Deps } from '../../deps';

// Placeholder handlers until the bootstrap endpoints land.
const todo = async (_ctx: Context): Promise<void> => {
  throw new AppError('internal', 'not implemented');
};

export function bootstrapRoutes(_deps: Deps) {
  return {
    signup: todo,
    login: todo,
    me: todo,
    createOrganization: todo,
    listSources: todo,
    createDatabase: todo,
    setupDatabase: todo,
    createProject: todo,
    createSourceToken: todo,
  };
}
