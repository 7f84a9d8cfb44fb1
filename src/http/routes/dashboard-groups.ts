import type { Context } from 'koa';
import { AppError } from '../../errors';
import type { Deps } from '../../deps';

// Placeholder handlers until these endpoints land.
const todo = async (_ctx: Context): Promise<void> => {
  throw new AppError('internal', 'not implemented');
};

export function dashboardGroupRoutes(_deps: Deps) {
  return {
    list: todo,
    show: todo,
    create: todo,
    update: todo,
    remove: todo,
  };
}
