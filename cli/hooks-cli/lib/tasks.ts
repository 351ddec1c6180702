/**
 * The assistant's task list, from the tools the host gives it:
 *  - TodoWrite (Claude Code before 2.1): `{todos: [{content, status, activeForm}]}`,
 *    the whole list each time;
 *  - TaskCreate / TaskUpdate (Claude Code 2.1, TodoWrite gone): TaskCreate's
 *    input is `{subject, description, activeForm?, metadata?}` and its
 *    response `{task: {id, subject}}`; TaskUpdate's input is `{taskId,
 *    status?, subject?, description?, activeForm?, owner?, addBlocks?,
 *    addBlockedBy?}` with status pending | in_progress | completed | deleted.
 *    Ids are the host's (small numbers as strings); a response without one
 *    gets the next free number, as the host counts.
 * Pure functions: the logger applies them inside its state update.
 */
import type { TaskItem, TodoItem } from './session';
import { isObject } from './store';

export const TASK_TOOLS = new Set(['TodoWrite', 'TaskCreate', 'TaskUpdate']);

export function todosOf(toolInput: Record<string, unknown>): TodoItem[] | null {
  if (!Array.isArray(toolInput.todos)) return null;
  return toolInput.todos.filter(isObject).map((t) => ({
    content: String(t.content ?? ''),
    status: String(t.status ?? 'pending'),
    ...(typeof t.activeForm === 'string' ? { activeForm: t.activeForm } : {}),
  }));
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);

/** The id the host gave a created task (`tool_response.task.id`), if it says. */
function createdId(response: unknown): string | null {
  let r = response;
  if (typeof r === 'string') {
    try {
      r = JSON.parse(r);
    } catch {
      const m = /Task #?(\d+)/i.exec(r as string);
      return m ? m[1] : null;
    }
  }
  return isObject(r) && isObject(r.task) ? text(r.task.id) : isObject(r) ? text(r.taskId) ?? text(r.id) : null;
}

function nextId(tasks: TaskItem[]): string {
  let max = 0;
  for (const t of tasks) if (/^\d+$/.test(t.id)) max = Math.max(max, Number(t.id));
  return String(max + 1);
}

/** Applies one TaskCreate or TaskUpdate call to the list (returns a new list). */
export function applyTaskTool(tasks: TaskItem[] | null, tool: string, input: Record<string, unknown>, response: unknown): TaskItem[] {
  const list = (tasks ?? []).map((t) => ({ ...t }));
  if (tool === 'TaskCreate') {
    const id = createdId(response) ?? nextId(list);
    const item: TaskItem = { id, subject: text(input.subject) ?? '(no subject)', description: text(input.description) ?? '', status: 'pending' };
    if (typeof input.activeForm === 'string') item.activeForm = input.activeForm;
    const at = list.findIndex((t) => t.id === id);
    if (at >= 0) list[at] = item;
    else list.push(item);
    return list;
  }
  if (tool === 'TaskUpdate') {
    const id = text(input.taskId) ?? text(input.id);
    if (id === null) return list;
    let item = list.find((t) => t.id === id);
    if (!item) {
      // Made before the hooks saw it (another session of the same list, or before install).
      item = { id, subject: text(input.subject) ?? `task ${id}`, description: '', status: 'pending' };
      list.push(item);
    }
    const status = text(input.status);
    if (status === 'deleted') return list.filter((t) => t !== item);
    if (status) item.status = status;
    if (text(input.subject)) item.subject = text(input.subject)!;
    if (text(input.description) !== null) item.description = text(input.description)!;
    if (typeof input.activeForm === 'string') item.activeForm = input.activeForm;
    return list;
  }
  return list;
}

/** One list for the documents: the tasks when the host used them, else the TodoWrite list. */
export function taskList(s: { todos: TodoItem[] | null; tasks: TaskItem[] | null }): { content: string; status: string }[] | null {
  if (s.tasks !== null) return s.tasks.map((t) => ({ content: `#${t.id} ${t.subject}`, status: t.status }));
  return s.todos;
}
