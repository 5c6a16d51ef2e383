/** The operations of the OpenAPI document, as the fuzzer needs them. */
import type { JsonSchema } from './schema-values.js';

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
}

export interface Operation {
  /** "POST /transactional/v1/orders/regular". */
  key: string;
  method: string;
  /** The path template, e.g. /transactional/v1/ordercart/{ordercartId}. */
  path: string;
  parameters: Parameter[];
  /** The JSON body's schema, if the operation takes one. */
  body: JsonSchema | undefined;
  bodyRequired: boolean;
  /** The security schemes every call needs (all of one requirement object). */
  security: string[];
  /** HTTP status -> media type -> schema (undefined when the document gives none). */
  responses: Map<number, Map<string, JsonSchema | undefined>>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

export interface OpenApiDocument {
  paths: Record<string, Record<string, Record<string, unknown>>>;
  components?: { securitySchemes?: Record<string, { type: string; scheme?: string; in?: string; name?: string }> };
}

export function operationsOf(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const parameters = ((operation.parameters ?? []) as Record<string, unknown>[]).map((p) => ({
        name: String(p.name),
        in: p.in as Parameter['in'],
        required: p.required === true,
        schema: (p.schema ?? {}) as JsonSchema,
      }));
      const requestBody = operation.requestBody as
        { required?: boolean; content?: Record<string, { schema?: JsonSchema }> } | undefined;
      const responses = new Map<number, Map<string, JsonSchema | undefined>>();
      for (const [status, response] of Object.entries(
        (operation.responses ?? {}) as Record<string, { content?: Record<string, { schema?: JsonSchema }> }>,
      )) {
        const media = new Map<string, JsonSchema | undefined>();
        for (const [type, content] of Object.entries(response.content ?? {})) media.set(type, content.schema);
        responses.set(Number(status), media);
      }
      const security = ((operation.security ?? []) as Record<string, unknown>[]).flatMap((requirement) =>
        Object.keys(requirement),
      );
      operations.push({
        key: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        parameters,
        body: requestBody?.content?.['application/json']?.schema,
        bodyRequired: requestBody?.required === true,
        security: [...new Set(security)],
        responses,
      });
    }
  }
  return operations;
}
